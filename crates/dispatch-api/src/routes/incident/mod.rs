//! `/incident/...`: the reads (mask search, detail, prank calls), the per-screen reads and
//! the writes; the request bodies of the forms are in `form`.

pub mod form;
pub mod reads;
pub mod screens;
pub mod units;
pub mod writes;

use super::Routes;

pub fn routes(r: &mut Routes<'_>) {
    reads::routes(r);
    screens::routes(r);
    writes::routes(r);
    units::routes(r);
}
