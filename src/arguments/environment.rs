//! The environment variables an argument's value reaches its command through. Every value
//! argument is `ACTIOND_ARG_<NAME>` (its name upper-cased): actiond's own namespace, which no
//! program reads as its settings. The bare `<NAME>` (what OliveTin sets, and what scripts
//! written for it read) is set as well only when the name has a shape no program's settings
//! variable has. The rule is by shape, not a list of names, because a list is always one name
//! short: `TAR_OPTIONS` runs code through `tar`, `RSYNC_RSH` through `rsync`,
//! `DBUS_SYSTEM_BUS_ADDRESS` through sd-bus, `http_proxy` steers every download.
//!
//! - A bare name is one plain word: letters and digits only. Programs name their settings
//!   `<PROGRAM>_<SETTING>`, so a name with `_` is never set bare.
//! - Of plain words, those shaped like settings are not set bare either: ending in a settings
//!   suffix (`…RC`, `…INIT`, `…PATH`, `…OPTS`, `…HOME`, …), starting with the name of a
//!   program family that reads words of its own (`PYTHON…`, `PERL…`, `LESS…`, `GO…`, …), or
//!   one of the single words the shell and common tools read (`PATH`, `IFS`, `ENV`, `EDITOR`,
//!   `GZIP`, …).
//!
//! A name that is not set bare is no error: its value is in `ACTIOND_ARG_<NAME>`, and the
//! config loader says so when the command reads the bare name. Pure; no I/O.

/// The prefix of the variables every value argument sets.
pub const PREFIX: &str = "ACTIOND_ARG_";

/// Plain words that end like a program's settings: files it reads at start (`…RC`,
/// `…INIT`), search paths and directories it loads from, option strings it obeys, programs
/// it runs, proxies and addresses it connects to.
const SUFFIXES: &[&str] = &[
    "RC", "INIT", "PATH", "OPT", "OPTS", "OPTION", "OPTIONS", "FLAGS", "LIB", "LIBS", "HOME",
    "DIR", "DIRS", "CONF", "CONFIG", "PAGER", "EDITOR", "SHELL", "PROXY", "ASKPASS", "PRELOAD",
];

/// Plain words that start like a program family's settings: interpreters (`PYTHONSTARTUP`,
/// `PERL5OPT`, `RUBYOPT`), shells (`BASHOPTS`), the C library, and tools that run programs
/// named in their environment (`LESSOPEN`, `GOTOOLCHAIN`, which downloads and runs a
/// compiler, `RUSTC`).
const PREFIXES: &[&str] = &[
    "ACTIOND", "PYTHON", "PERL", "RUBY", "PHP", "LUA", "JAVA", "BASH", "ZSH", "LESS", "GO", "RUST",
    "KUBE", "OPENSSL", "TERM", "GCONV", "GLIBC", "MALLOC",
];

/// Single words the shell, the C library and common tools read as settings. `TZ` and `USER`
/// are not here: at worst they name a zone file to read or a name to show, and real configs
/// take both as arguments.
const WORDS: &[&str] = &[
    "PATH",
    "HOME",
    "SHELL",
    "IFS",
    "ENV",
    "CDPATH",
    "FPATH",
    "LANG",
    "LANGUAGE",
    "NLSPATH",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "BROWSER",
    "DISPLAY",
    "XAUTHORITY",
    "GZIP",
    "BZIP",
    "BZIP2",
    "XZ",
    "ZSTD",
    "MORE",
    "MANOPT",
    "EXINIT",
    "VIMINIT",
    "GVIMINIT",
    "MYVIMRC",
    "CC",
    "CXX",
    "CPP",
    "LEX",
    "YACC",
    "MAKE",
    "MAKEFLAGS",
    "MAKEFILES",
    "MFLAGS",
    "CLASSPATH",
    "TEXINPUTS",
    "PROMPT",
    "COLUMNS",
    "LINES",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "OPTIND",
    "OPTARG",
    "TAPE",
    "PRINTER",
    "LPDEST",
    "TMP",
    "TEMP",
    "MAIL",
    "MAILCHECK",
    "MAILER",
    "HISTFILE",
    "SSLKEYLOGFILE",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
];

/// The arguments actiond itself declares for a file trigger, set bare as OliveTin sets them;
/// a name such as `FILEPATH` is no program's setting, though it ends like one.
const FILE_TRIGGER: &[&str] = &[
    "FILEPATH",
    "FILENAME",
    "FILEDIR",
    "FILEEXT",
    "FILESIZEBYTES",
    "FILEMODE",
    "FILEMTIME",
    "FILEISDIR",
];

/// Why `name` is not set as a bare variable, or `None` when it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotBare {
    /// It has characters no environment variable name has: not set at all, not even
    /// prefixed. Its value reaches the command through `{{ name }}` only.
    NoVariable,
    /// It has `_` (or starts with a digit): `<PROGRAM>_<SETTING>` is how programs name their
    /// settings.
    Compound,
    /// A plain word shaped like a program's settings.
    Settings,
}

impl NotBare {
    /// The reason, after "… is not set as $NAME because …".
    pub fn why(self) -> &'static str {
        match self {
            NotBare::NoVariable => "it has characters an environment variable name cannot have",
            NotBare::Compound => {
                "a name with `_` may be a program's settings (as TAR_OPTIONS and RSYNC_RSH are)"
            }
            NotBare::Settings => {
                "it is shaped like a program's settings (a word such as PATH, EDITOR or \
                 VIMINIT, one ending in RC, PATH, OPTS or HOME, or starting with PYTHON, LESS \
                 or GIT)"
            }
        }
    }
}

/// Whether an argument named `name` also sets its bare, upper-cased variable.
pub fn bare(name: &str) -> Result<(), NotBare> {
    if prefixed(name).is_none() {
        return Err(NotBare::NoVariable);
    }
    let upper = name.to_ascii_uppercase();
    let plain = upper.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && upper.bytes().all(|b| b.is_ascii_alphanumeric());
    if !plain {
        return Err(NotBare::Compound);
    }
    if FILE_TRIGGER.contains(&upper.as_str()) {
        return Ok(());
    }
    let settings = WORDS.contains(&upper.as_str())
        || SUFFIXES.iter().any(|s| upper.ends_with(s))
        || PREFIXES.iter().any(|p| upper.starts_with(p));
    if settings {
        Err(NotBare::Settings)
    } else {
        Ok(())
    }
}

/// `ACTIOND_ARG_<NAME>`, or `None` when the name has characters no variable name has (only
/// letters, digits and `_` are kept by every shell).
pub fn prefixed(name: &str) -> Option<String> {
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then(|| format!("{PREFIX}{}", name.to_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name a finding or a program's manual showed to run code, load code or steer a
    /// program through its environment: none is set bare.
    #[test]
    fn settings_variables_are_never_set_bare() {
        for name in [
            "tar_options",
            "rsync_rsh",
            "rsync_connect_prog",
            "dbus_system_bus_address",
            "http_proxy",
            "HTTPS_PROXY",
            "all_proxy",
            "xdg_config_home",
            "sudo_editor",
            "viminit",
            "psqlrc",
            "node_options",
            "pythonpath",
            "PythonStartup",
            "perl5opt",
            "perl5lib",
            "git_ssh_command",
            "gconv_path",
            "bash_env",
            "ld_preload",
            "LD_LIBRARY_PATH",
            "path",
            "ifs",
            "env",
            "shellopts",
            "rubyopt",
            "ssh_askpass",
            "lessopen",
            "lc_all",
            "lang",
            "glibc_tunables",
            "actiond_user",
            "actiond",
            "ps4",
            "java_tool_options",
            "openssl_conf",
            "gzip",
            "grep_options",
            "wgetrc",
            "curl_home",
            "inputrc",
            "gotoolchain",
            "goflags",
            "lessopen",
            "rustc",
            "bashopts",
            "goflags",
            "editor",
            "pager",
            "manpager",
            "systemd_pager",
            "mysql_home",
            "docker_host",
            "kubeconfig",
            "histfile",
            "tmpdir",
            "makeflags",
            "git_config_key_0",
            "npm_config_script_shell",
        ] {
            assert!(bare(name).is_err(), "{name} should not be set bare");
        }
    }

    #[test]
    fn plain_words_are_set_bare_as_well() {
        for name in [
            "host",
            "target",
            "message",
            "pin",
            "service",
            "container",
            "count",
            "duration",
            "tz",
            "user",
            "password",
            "filename",
            "filepath",
            "email",
            "url",
            "key",
            "name",
            "state",
            "node",
            "git",
            "ssh",
            "lcd",
            "level",
            "dvr",
            "channel",
            "Host2",
            "file",
            "command",
            "location",
            "temperature",
            "manual",
            "history",
            "power",
            "filepath",
            "filedir",
        ] {
            assert_eq!(bare(name), Ok(()), "{name} should be set bare");
        }
    }

    #[test]
    fn every_argument_with_a_variable_name_is_set_prefixed() {
        assert_eq!(prefixed("tar_options").unwrap(), "ACTIOND_ARG_TAR_OPTIONS");
        assert_eq!(prefixed("Host").unwrap(), "ACTIOND_ARG_HOST");
        assert_eq!(prefixed("9lives").unwrap(), "ACTIOND_ARG_9LIVES");
        for odd in ["", "a-b", "a b", "a=b", "é", "a.b"] {
            assert_eq!(prefixed(odd), None, "{odd:?}");
            assert_eq!(bare(odd), Err(NotBare::NoVariable), "{odd:?}");
        }
        assert_eq!(bare("9lives"), Err(NotBare::Compound));
        assert_eq!(bare("container_name"), Err(NotBare::Compound));
    }

    #[test]
    fn the_tables_are_upper_case() {
        for list in [SUFFIXES, PREFIXES, WORDS, FILE_TRIGGER] {
            for entry in list {
                assert_eq!(entry.to_ascii_uppercase(), *entry);
            }
        }
    }
}
