//! The layer order of docs/architecture.md ("proposal-callback"): no module names one above
//! it, and no two modules import each other, directly or round a circle.

use std::path::Path;

use common::test_support::layers::{Layer, Shun, assert_layers, assert_shuns};

/// From the top down; a module may use those in its own layer or below.
const LAYERS: &[Layer] = &[
    Layer {
        name: "start-up",
        modules: &["startup", "openapi", "settings"],
    },
    Layer {
        name: "pages",
        modules: &["routes", "console", "seed"],
    },
    Layer {
        name: "state",
        modules: &["state"],
    },
    Layer {
        name: "callers",
        modules: &["auth", "ratelimit"],
    },
    Layer {
        name: "flows and queries",
        modules: &["query", "flow"],
    },
    Layer {
        name: "metrics",
        modules: &["metrics"],
    },
    Layer {
        name: "error",
        modules: &["error"],
    },
    Layer {
        name: "store",
        modules: &["store"],
    },
    Layer {
        name: "outside",
        modules: &["registration", "email"],
    },
    Layer {
        name: "domain",
        modules: &["domain"],
    },
    Layer {
        name: "schema",
        modules: &["schema", "hex"],
    },
];

/// The store returns diesel's rows and errors (docs/architecture.md, "proposal-callback"):
/// it names no HTTP type and not the service's `Error`, the same rule as dispatch-api's
/// store.
const SHUNS: &[Shun] = &[Shun {
    modules: &["store"],
    paths: &[
        "crate::error",
        "crate::routes",
        "actix_web",
        "actix_http",
        "http",
        "common::Problem",
        "common::problem",
        "common::extract",
    ],
    why: "the store speaks in its own types, no HTTP",
}];

#[test]
fn every_import_points_down_the_layers_and_none_is_a_circle() {
    assert_layers(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), LAYERS);
}

#[test]
fn the_store_names_no_http_type_and_not_the_services_error() {
    assert_shuns(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), SHUNS);
}
