//! The shared crate's layers (docs/architecture.md): the service skeleton on top, plumbing
//! in the middle, plain types at the bottom; no module names one above it, and no two
//! modules import each other.

use std::path::Path;

use common::test_support::layers::{Layer, assert_layers};

/// From the top down; a module may use those in its own layer or below.
const LAYERS: &[Layer] = &[
    Layer {
        name: "skeleton",
        modules: &["service"],
    },
    Layer {
        name: "app",
        modules: &["http"],
    },
    Layer {
        name: "telemetry",
        modules: &["telemetry"],
    },
    Layer {
        name: "settings and tests",
        modules: &["settings", "test_support"],
    },
    Layer {
        name: "plumbing",
        modules: &["auth", "extract", "db", "listen", "routes", "pages"],
    },
    Layer {
        name: "types",
        modules: &[
            "config",
            "problem",
            "clock",
            "docs",
            "text_enum",
            "in_flight",
        ],
    },
];

#[test]
fn every_import_points_down_the_layers_and_none_is_a_circle() {
    assert_layers(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), LAYERS);
}
