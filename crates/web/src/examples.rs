//! The bundled example scenarios (the repository's `examples/`), embedded in the binary:
//! a job names one by its name and gets it with the data files it reads beside it. No
//! request names a file.

/// (name, file name, text).
pub const EXAMPLES: &[(&str, &str, &str)] = &[
    ("allreduce-compare", "allreduce-compare.toml", include_str!("../../../examples/allreduce-compare.toml")),
    ("deadlock-ring", "deadlock-ring.toml", include_str!("../../../examples/deadlock-ring.toml")),
    ("ib-from-ibnetdiscover", "ib-from-ibnetdiscover.toml", include_str!("../../../examples/ib-from-ibnetdiscover.toml")),
    ("ib-incast", "ib-incast.toml", include_str!("../../../examples/ib-incast.toml")),
    ("ib-sharp-allreduce", "ib-sharp-allreduce.toml", include_str!("../../../examples/ib-sharp-allreduce.toml")),
    ("ib-sm-failure", "ib-sm-failure.toml", include_str!("../../../examples/ib-sm-failure.toml")),
    ("ib-stuck-hca", "ib-stuck-hca.toml", include_str!("../../../examples/ib-stuck-hca.toml")),
    ("roce-incast-background", "roce-incast-background.toml", include_str!("../../../examples/roce-incast-background.toml")),
    ("roce-incast", "roce-incast.toml", include_str!("../../../examples/roce-incast.toml")),
    ("roce-link-failure", "roce-link-failure.toml", include_str!("../../../examples/roce-link-failure.toml")),
    ("roce-misconfigured-port", "roce-misconfigured-port.toml", include_str!("../../../examples/roce-misconfigured-port.toml")),
    ("roce-misconfigured", "roce-misconfigured.toml", include_str!("../../../examples/roce-misconfigured.toml")),
    ("roce-permutation", "roce-permutation.toml", include_str!("../../../examples/roce-permutation.toml")),
    ("roce-pfc-storm", "roce-pfc-storm.toml", include_str!("../../../examples/roce-pfc-storm.toml")),
    ("roce-slow-receiver", "roce-slow-receiver.toml", include_str!("../../../examples/roce-slow-receiver.toml")),
    ("roce-sweep-kmin", "roce-sweep-kmin.toml", include_str!("../../../examples/roce-sweep-kmin.toml")),
    ("routing-loop", "routing-loop.toml", include_str!("../../../examples/routing-loop.toml")),
];

/// The files the examples read, by their path relative to the scenario.
pub const DATA: &[(&str, &str)] = &[
    ("fabric-2level.ibnetdiscover", include_str!("../../../examples/fabric-2level.ibnetdiscover")),
    ("data/FbHdp_distribution.txt", include_str!("../../../examples/data/FbHdp_distribution.txt")),
    ("data/WebSearch_distribution.txt", include_str!("../../../examples/data/WebSearch_distribution.txt")),
];

/// The example called `name`: (file name, text).
pub fn find(name: &str) -> Option<(&'static str, &'static str)> {
    EXAMPLES.iter().find(|e| e.0 == name).map(|e| (e.1, e.2))
}

/// The names, for `/api/examples` and the error that lists them.
pub fn names() -> Vec<&'static str> {
    EXAMPLES.iter().map(|e| e.0).collect()
}
