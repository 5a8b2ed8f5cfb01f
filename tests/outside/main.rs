//! Floodgate with the programs around it: Let's Encrypt's pebble and lego (ACME), nginx and Caddy asking the decision endpoint,
//! Envoy's rate limit protocol, CrowdSec's Local API, the container image under podman, the
//! deployment files judged by systemd-analyze and kubernetes-validate, and the Grafana
//! dashboard's queries asked of a real Prometheus.

#[path = "../common/mod.rs"]
mod common;

mod acme;
mod check;
mod crowdsec;
mod dashboard;
mod deploy;
mod image;
mod rls;
