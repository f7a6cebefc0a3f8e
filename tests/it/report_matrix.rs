//! The GPU dimension (issue 40, item 6): a Windows GPU's driver model (`GPU t4 (TCC)`,
//! `GPU a100 (MCDM)`) is a dimension of its own, `driver model`, so `t4` and `t4 (TCC)` are one
//! GPU, and the account's "gpu (N)" counts GPUs.

use std::collections::BTreeSet;

use crate::common::{self, flake_account, story_dir, surveyed_story};

const DRIVER_MODELS: [&str; 3] = ["TCC", "MCDM", "WDDM"];

/// A dimension's values in a signature's JSON (`dimensions` or `within.dimensions`).
fn values(dims: &serde_json::Value, name: &str) -> BTreeSet<String> {
    dims[name]
        .as_object()
        .unwrap_or_else(|| panic!("no dimension {name:?} in {dims}"))
        .keys()
        .cloned()
        .collect()
}

#[test]
fn a_driver_model_is_a_dimension_of_its_own_not_another_gpu() {
    // The story names the same GPU with and without a driver model.
    let ds = flakestat::fake::Dataset::load(&story_dir()).unwrap();
    let names: BTreeSet<String> = ds
        .runs
        .iter()
        .flat_map(|r| r.all_jobs())
        .map(|j| j.name.clone())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("GPU t4")), "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with("GPU t4 (TCC)")),
        "{names:?}"
    );

    let signatures = common::signatures();
    let extra = [
        "--until",
        "2026-07-31",
        "--signatures",
        signatures.to_str().unwrap(),
    ];
    let json = flake_account(
        "NVIDIA/cuda-python",
        "2026-06-15",
        surveyed_story(),
        &extra,
        "json",
    );
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let s = &report["signatures"][0];
    let gpus = values(&s["dimensions"], "gpu");
    assert!(gpus.contains("t4"), "{gpus:?}");
    for gpu in &gpus {
        assert!(
            !gpu.contains('(') && !DRIVER_MODELS.iter().any(|m| gpu.contains(m)),
            "a gpu value with a qualifier: {gpu:?} in {gpus:?}"
        );
    }
    let models = values(&s["dimensions"], "driver model");
    assert!(models.contains("TCC"), "{models:?}");
    assert!(
        models.iter().all(|m| DRIVER_MODELS.contains(&m.as_str())),
        "{models:?}"
    );

    // The account's sentence counts the values of the confinement's other dimensions.
    let within = &s["within"]["dimensions"];
    let (gpus, models) = (values(within, "gpu"), values(within, "driver model"));
    let md = flake_account(
        "NVIDIA/cuda-python",
        "2026-06-15",
        surveyed_story(),
        &extra,
        "markdown",
    );
    let sentence = format!("gpu ({}), driver model ({})", gpus.len(), models.len());
    assert!(md.contains(&sentence), "no {sentence:?} in:\n{md}");
    // Three GPUs run the flake's 3.14t jobs (t4, a100, h100), whatever their driver model.
    let named: BTreeSet<&str> = names
        .iter()
        .filter(|n| n.contains("3.14t"))
        .filter_map(|n| n.split("GPU ").nth(1))
        .map(|g| g.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        gpus.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        named,
        "every GPU the story's 3.14t jobs name, once"
    );
}
