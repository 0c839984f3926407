//! Which environment variable names an argument may not take. Every value argument reaches
//! its command as an environment variable named after it, upper-cased, holding the caller's
//! value. A name some program reads as code, as a path to load code from, or as the rules
//! its shell parses by would hand the caller that program: `node_options` would make
//! `--require=/tmp/x.js` run in every Node process the command starts. This is the one list
//! of such names; the config loader refuses an argument that would become one, naming its
//! YAML path. It is pure and does no I/O.

/// How a name is matched: exactly, or by its beginning.
#[derive(Debug, Clone, Copy)]
enum Match {
    Exact(&'static str),
    Prefix(&'static str),
}

use Match::{Exact, Prefix};

/// Every refused name (upper-case), and why. An entry's reason is shown to whoever writes
/// the config, after "it would set".
const REFUSED: &[(Match, &str)] = &[
    // actiond's own variables: a command must be able to trust who started it.
    (
        Prefix("ACTIOND"),
        "actiond's own variables, which tell the command who started it",
    ),
    // The dynamic linker loads any library these name into every program started.
    (
        Prefix("LD_"),
        "the dynamic linker's variables, which load libraries into every program",
    ),
    (
        Exact("GLIBC_TUNABLES"),
        "the C library's tunables, whose parser has let local users take over programs",
    ),
    (Prefix("MALLOC_"), "the C library's allocator settings"),
    // Shell start-up and parsing: the shell runs these files, functions and prompts, or
    // splits and finds commands by them.
    (Exact("PATH"), "where the shell finds every command"),
    (
        Exact("HOME"),
        "the home directory, where programs read their start-up files",
    ),
    (
        Exact("SHELL"),
        "the shell that programs start for subcommands",
    ),
    (Exact("IFS"), "how the shell splits words"),
    (Exact("ENV"), "a file that sh and ash run when they start"),
    (
        Prefix("BASH_"),
        "bash's variables: BASH_ENV is a file it runs, BASH_FUNC_* functions",
    ),
    (
        Exact("SHELLOPTS"),
        "the shell's options (xtrace, and others that change what runs)",
    ),
    (Exact("BASHOPTS"), "bash's options"),
    (
        Exact("PS4"),
        "the trace prompt, which the shell expands (running what it substitutes)",
    ),
    (
        Exact("PROMPT_COMMAND"),
        "a command bash runs before each prompt",
    ),
    (Exact("CDPATH"), "where cd looks for directories"),
    (
        Exact("GLOBIGNORE"),
        "which names the shell's globs leave out",
    ),
    (Exact("ZDOTDIR"), "where zsh reads its start-up files"),
    (
        Exact("TMPDIR"),
        "where programs create their temporary files",
    ),
    // Interpreters read code or a search path for code from these.
    (
        Prefix("PYTHON"),
        "Python's variables: PYTHONPATH, PYTHONSTARTUP, PYTHONHOME load code",
    ),
    (
        Prefix("PERL5"),
        "Perl's variables: PERL5OPT and PERL5LIB load code",
    ),
    (Exact("PERLLIB"), "Perl's module path"),
    (Prefix("PERL_"), "Perl's variables"),
    (
        Prefix("NODE_"),
        "Node's variables: NODE_OPTIONS can --require any file",
    ),
    (
        Prefix("RUBY"),
        "Ruby's variables: RUBYOPT and RUBYLIB load code",
    ),
    (Prefix("LUA_"), "Lua's variables: LUA_INIT runs code"),
    (
        Exact("PHPRC"),
        "PHP's configuration, which can prepend any file",
    ),
    (
        Exact("PHP_INI_SCAN_DIR"),
        "where PHP reads more configuration",
    ),
    (
        Exact("JAVA_TOOL_OPTIONS"),
        "options every Java program obeys, -javaagent among them",
    ),
    (Exact("_JAVA_OPTIONS"), "options every Java program obeys"),
    (Exact("JDK_JAVA_OPTIONS"), "options the java launcher obeys"),
    // The locale and character-set conversion load modules and data from these. TZ is not
    // here: at worst it names a zone file to read, and real configs take the time zone as an
    // argument named TZ.
    (
        Exact("LANG"),
        "the locale, which decides what bytes the shell treats as letters",
    ),
    (Exact("LANGUAGE"), "the translation search list"),
    (Prefix("LC_"), "the locale categories"),
    (Exact("LOCPATH"), "where the C library loads locales from"),
    (
        Exact("NLSPATH"),
        "where programs load message catalogues from",
    ),
    (
        Exact("GCONV_PATH"),
        "where iconv loads conversion modules (code) from",
    ),
    (
        Exact("HOSTALIASES"),
        "a file of host names the resolver reads",
    ),
    (Exact("RES_OPTIONS"), "the resolver's options"),
    (Exact("LOCALDOMAIN"), "the resolver's search domains"),
    // Tools that run commands named in their environment.
    (
        Prefix("GIT_"),
        "git's variables: GIT_SSH_COMMAND and GIT_EXEC_PATH run programs",
    ),
    (
        Prefix("SSH_"),
        "ssh's variables: SSH_ASKPASS runs a program, SSH_AUTH_SOCK lends keys",
    ),
    (Exact("SUDO_ASKPASS"), "a program sudo runs for a password"),
    (
        Prefix("LESS"),
        "less's variables: LESSOPEN and LESSCLOSE run commands",
    ),
    (Exact("PAGER"), "the pager programs run"),
    (Exact("MANPAGER"), "the pager man runs"),
    (Exact("EDITOR"), "the editor programs run"),
    (Exact("VISUAL"), "the editor programs run"),
    (Exact("BROWSER"), "the browser programs run"),
    (
        Prefix("OPENSSL_"),
        "OpenSSL's variables: OPENSSL_CONF loads engines (code)",
    ),
    (
        Exact("CURL_HOME"),
        "where curl reads a configuration that can write any file",
    ),
    (
        Exact("WGETRC"),
        "a configuration wget obeys, which can write any file",
    ),
    (
        Exact("SYSTEMD_PAGER"),
        "the pager systemctl and journalctl run",
    ),
    (Exact("SYSTEMD_EDITOR"), "the editor systemctl runs"),
];

/// Why an argument named `name` may not be one: what its environment variable would set.
/// None when the name is safe.
pub fn refused_name(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    REFUSED.iter().find_map(|(m, why)| {
        let hit = match m {
            Exact(n) => upper == *n,
            Prefix(p) => upper.starts_with(p),
        };
        hit.then_some(*why)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_names_are_refused_in_any_case() {
        for name in [
            "node_options",
            "pythonpath",
            "PythonStartup",
            "perl5opt",
            "perl5lib",
            "git_ssh_command",
            "gconv_path",
            "bash_env",
            "Bash_Func_x%%",
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
        ] {
            assert!(refused_name(name).is_some(), "{name} should be refused");
        }
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "host",
            "target",
            "message",
            "environment",
            "envelope",
            "paths",
            "language_code",
            "node",
            "git",
            "ssh",
            "lcd",
            "tz",
            "tz_offset",
            "home_dir",
            "user",
            "password",
            "filepath",
            "filename",
        ] {
            assert_eq!(refused_name(name), None, "{name} should pass");
        }
    }

    #[test]
    fn every_entry_says_why_and_is_upper_case() {
        for (m, why) in REFUSED {
            let (Exact(n) | Prefix(n)) = m;
            assert_eq!(n.to_ascii_uppercase(), *n);
            assert!(!why.is_empty(), "{n}");
        }
    }
}
