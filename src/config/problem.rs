//! `Problem`: one thing wrong with the config, where it is and what is wrong, as every part
//! of the validation reports it and the log, the diagnostics and `--check-config` show it. It
//! must not decide what is wrong: the parts of `config` do.

/// One problem found while validating, located by its YAML path (`actions[2].timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
