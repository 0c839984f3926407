//! Black-box integration tests: each test starts the real `actiond` binary on loopback with
//! its own temporary config directory and drives it over HTTP with an independent client,
//! then checks the answers and, for executions, the operating system itself (/proc).
//!
//! All files form one test binary to keep link time down: `harness` starts the service and
//! inspects processes, `client` speaks HTTP/1.1 and Connect JSON, and each other module
//! covers one topic of the API.

mod broker;
mod client;
mod harness;

mod abuse;
mod appliance;
mod argument_rules;
mod arguments;
mod cli_credentials;
mod clients;
mod closed_pipes;
mod codecs;
mod config_attacks;
mod config_check;
mod config_lands;
mod config_names;
mod config_pipes;
mod config_readers;
mod config_targets;
mod crash;
mod dashboards;
mod durability;
mod entity_paths;
mod escapes;
mod events;
mod fe30e;
mod fe30f;
mod home_assistant;
mod hostile_broker;
mod hostile_clients;
mod hostile_files;
mod household;
mod identity;
mod lan;
mod layers;
mod limits;
mod live_permissions;
mod logs;
mod memory;
mod metrics;
mod migration;
mod mqtt;
mod open_writers;
mod operations;
mod overlay_rights;
mod permissions;
mod processes;
mod quoting_fuzz;
mod reload;
mod run_as;
mod sessions;
mod shares;
mod shell_model;
mod shutdown;
mod soak;
mod storage;
mod systemd;
mod triggers;
mod watcher;
mod web;
mod wire;
