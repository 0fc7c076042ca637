//! HTTP tests of proposal-callback: a real server, a real database per test.

mod support;

mod admin;
mod admin_token;
mod auth;
mod callback;
mod clock;
mod console;
mod dry_run;
mod email;
mod exactly_once;
mod hostile;
mod layers;
mod mail;
mod mail_trust;
mod migrations;
mod order;
mod pause;
mod register;
mod restart;
mod retention;
mod seed;
mod senders;
mod serve;
mod silence;
mod staff_tokens;
mod story;
mod sweeper;
mod time_zones;
mod token_binding;
