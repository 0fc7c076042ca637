//! The layer order of docs/architecture.md ("dispatch-api"): no module names one above it,
//! and no two modules import each other, directly or round a circle.

use std::path::Path;

use common::test_support::layers::{Layer, Shun, assert_layers, assert_shuns};

/// From the top down; a module may use those in its own layer or below.
const LAYERS: &[Layer] = &[
    Layer {
        name: "start-up",
        modules: &["startup", "openapi", "settings"],
    },
    Layer {
        name: "manager's page",
        modules: &["manager"],
    },
    Layer {
        name: "routes",
        modules: &["routes"],
    },
    Layer {
        name: "listener",
        modules: &["listener"],
    },
    Layer {
        name: "auth",
        modules: &["auth", "cors"],
    },
    Layer {
        name: "state",
        modules: &["state"],
    },
    Layer {
        name: "seed",
        modules: &["seed"],
    },
    Layer {
        name: "caches and fan-out",
        modules: &[
            "catalog",
            "user_cache",
            "token_cache",
            "realtime",
            "access_log",
            "telephony",
        ],
    },
    Layer {
        name: "wire",
        modules: &["views", "patient_data"],
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
        name: "search",
        modules: &["search"],
    },
    Layer {
        name: "domain",
        modules: &["domain"],
    },
    Layer {
        name: "schema",
        modules: &["schema", "bench"],
    },
];

/// The store returns its own rows, read models and error (docs/architecture.md,
/// "dispatch-api"): it names no view, no HTTP type and not the routes' `Error`.
const SHUNS: &[Shun] = &[Shun {
    modules: &["store"],
    paths: &[
        "crate::views",
        "crate::error",
        "actix_web",
        "actix_http",
        "actix_ws",
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
fn the_store_names_no_view_no_http_type_and_not_the_routes_error() {
    assert_shuns(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), SHUNS);
}
