//! The layer order of docs/architecture.md ("proposal-callback"): no module names one above
//! it, and no two modules import each other, directly or round a circle.

use std::path::Path;

use common::test_support::layers::{Layer, assert_layers};

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

#[test]
fn every_import_points_down_the_layers_and_none_is_a_circle() {
    assert_layers(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), LAYERS);
}
