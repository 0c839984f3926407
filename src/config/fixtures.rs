//! Test helpers for the config's unit tests: parse a text with a fixed environment and base
//! directory, and assert on its errors and warnings by path.

use std::path::PathBuf;

use super::{Config, Problem, Source, parse};

/// Environment for tests: a fixed list, never the real environment.
pub(super) fn env_of(
    vars: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<String> {
    move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_string())
    }
}

pub(super) fn no_env(_: &str) -> Option<String> {
    None
}

pub(super) fn base() -> PathBuf {
    PathBuf::from("/srv/actiond")
}

/// A config without any error: nothing refused, no action disabled.
pub(super) fn ok(text: &str) -> (Config, Vec<Problem>) {
    let (config, warnings) = loads(text);
    let disabled = config.action_errors();
    assert!(
        disabled.is_empty(),
        "expected a valid config, got disabled actions {disabled:#?}\n{text}"
    );
    (config, warnings)
}

/// A config that loads, possibly with disabled actions.
pub(super) fn loads(text: &str) -> (Config, Vec<Problem>) {
    match parse(text, Source::Embedded, base(), &no_env) {
        Ok(result) => result,
        Err((errors, _)) => panic!("expected a config that loads, got errors {errors:#?}\n{text}"),
    }
}

/// Every error of `text`: those that refuse it, or else those that disable its actions.
pub(super) fn errors(text: &str) -> Vec<Problem> {
    match parse(text, Source::Embedded, base(), &no_env) {
        Ok((config, _)) => {
            let errors = config.action_errors();
            assert!(!errors.is_empty(), "expected errors for\n{text}");
            errors
        }
        Err((errors, _)) => errors,
    }
}

/// The errors that refuse `text` as a whole (it must not load).
pub(super) fn fatal(text: &str) -> Vec<Problem> {
    match parse(text, Source::Embedded, base(), &no_env) {
        Ok(_) => panic!("expected {text:?} to be refused"),
        Err((errors, _)) => errors,
    }
}

/// Asserts that `text` fails with exactly one error at `path` whose message holds `needle`.
pub(super) fn assert_error(text: &str, path: &str, needle: &str) {
    let errs = errors(text);
    assert!(
        errs.iter()
            .any(|p| p.path == path && p.message.contains(needle)),
        "expected an error at {path:?} containing {needle:?} for\n{text}\ngot {errs:#?}"
    );
    assert_eq!(
        errs.len(),
        1,
        "expected one error for\n{text}\ngot {errs:#?}"
    );
}

pub(super) fn assert_warning(text: &str, path: &str, needle: &str) {
    let (_, warnings) = ok(text);
    assert!(
        warnings
            .iter()
            .any(|p| p.path == path && p.message.contains(needle)),
        "expected a warning at {path:?} containing {needle:?} for\n{text}\ngot {warnings:#?}"
    );
}

pub(super) const ONE_ACTION: &str = "actions:\n  - title: Hello\n    shell: echo hi\n";
