//! The integration tests, one binary: each module is one topic (the real binary against the fake
//! GitHub on 127.0.0.1, the analysis over built snapshots, the fake itself, the stores …);
//! `common` holds what the story's tests share, `report_fixture` the story built as a snapshot,
//! `snapshot_output` and `snapshot_errors` the insta snapshots (in `snapshots/`) of every output
//! format and every user-facing error.
//! One binary links the library once, where one per file linked it thirty-five times.
//!
//! Run one module with `cargo test --test it MODULE::` (for example `cargo test --test it
//! trust_store::`).

mod common;
mod report_fixture;

mod app_auth;
mod attempt_logs;
mod bisect_scenario;
mod classify_cli;
mod classify_fixtures;
mod classify_pytorch;
mod classify_real;
mod classify_tests;
mod cli_docs;
mod cli_hints;
mod docs;
#[cfg(feature = "parquet")]
mod export_parquet;
#[cfg(not(feature = "parquet"))]
mod export_without_parquet;
mod fake_client;
mod fake_scenario;
mod fake_server;
mod fleet_replay;
mod fork_prs;
mod hidden_flakes;
mod hosts;
mod ingest_api;
mod nightly;
mod nightly_report;
mod pictures;
mod pr;
mod quick_start;
mod report_analysis;
mod report_cli;
mod report_golden;
mod report_headline;
mod report_json;
mod report_markdown;
mod report_matrix;
mod report_scenario;
mod report_table;
mod report_test_onset;
mod report_tests;
mod report_verdicts;
mod security_net;
mod serve;
mod serve_faults;
mod serve_replicas;
mod serve_story;
mod signatures_audit;
mod signatures_audit_green;
mod signatures_cli;
mod snapshot_errors;
mod snapshot_output;
mod store_postgres;
mod suggest_story;
mod survey_artifacts;
mod survey_cli;
mod survey_cost;
mod survey_fetch;
mod survey_org;
mod survey_resume;
mod trust_incomplete;
mod trust_input;
mod trust_mentions;
mod trust_store;
mod writers;
