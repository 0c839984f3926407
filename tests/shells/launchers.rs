//! Shells and commands that a program starts for the command, run for real: a shell a
//! launcher names in an option (`start-stop-daemon --exec /bin/sh -- -c`, busybox's too),
//! `capsh -- -c`, and the options whose command a program runs (`tar --to-command=`, `tar
//! -I`, `ssh -o ProxyCommand=`, `git -c core.sshCommand=`, `rsync -e`, `find -exec`). Each
//! hostile row, rendered as the model quotes the value for the outer shell (what a build that
//! accepted it ran), runs the value in every shell, and the model now refuses it; each safe
//! row (the value as data: a positional parameter of the inner script, an environment
//! variable) is accepted and runs nothing.

use super::findings::{Quoting, Row, check_rows};

/// Each row: the template (`{dir}` is the run's directory: start-stop-daemon changes to `/`
/// unless told, and busybox's starts nothing while any `/bin/sh` runs unless it has a pidfile
/// of its own; the rows that unpack an archive make it first, as the directory is emptied
/// after every run), the value, how its context is quoted, and whether it runs the value.
const ROWS: &[Row] = &[
    // F9: a shell a launcher names in an option.
    (
        "/usr/sbin/start-stop-daemon --start --pidfile {dir}/ssd.pid --make-pidfile --chdir \
         {dir} --exec /bin/sh -- -c \"echo fetching {{ v }}\"",
        "x;touch MARK;",
        Quoting::Double,
        true,
    ),
    (
        "busybox start-stop-daemon -S -p {dir}/bb.pid -m -x /bin/sh -- -c \
         \"echo {{ v }}\"",
        "x;touch MARK;",
        Quoting::Double,
        true,
    ),
    (
        "/usr/sbin/capsh --drop=cap_net_raw -- -c \"echo {{ v }}\"",
        "$(touch MARK)",
        Quoting::Double,
        true,
    ),
    (
        "/usr/sbin/runuser -u root -- {{ v }} MARK",
        "touch",
        Quoting::Single,
        true,
    ),
    // F9b: an option's command.
    (
        "echo hi > f && tar -cf a.tar f && tar -xf a.tar --to-command=\"cat >/dev/null; echo \
         {{ v }}\"",
        "$(touch MARK)",
        Quoting::Double,
        true,
    ),
    (
        "echo hi > f && tar -I \"gzip {{ v }}\" -cf b.tgz f",
        "x;touch MARK;",
        Quoting::Double,
        true,
    ),
    (
        "ssh -o BatchMode=yes -o ProxyCommand=\"echo {{ v }}\" nosuchhost true",
        "$(touch MARK)",
        Quoting::Double,
        true,
    ),
    (
        "git -c core.sshCommand=\"echo {{ v }}\" ls-remote ssh://nosuchhost/x",
        "$(touch MARK)",
        Quoting::Double,
        true,
    ),
    (
        "rsync -e \"ssh -o BatchMode=yes {{ v }}\" nosuchhost:x .",
        "-oProxyCommand=touch${IFS}MARK",
        Quoting::Double,
        true,
    ),
    (
        "find . -maxdepth 0 -exec {{ v }} MARK \\;",
        "touch",
        Quoting::Single,
        true,
    ),
    // The value as data: accepted, and it runs nothing.
    (
        "busybox start-stop-daemon -S -p {dir}/bb.pid -m -x /bin/sh -- -c 'echo \"$1\"' sh \
         {{ v }}",
        "x;touch MARK;",
        Quoting::Single,
        false,
    ),
    (
        "/usr/sbin/capsh -- -c 'echo \"$1\"' sh {{ v }}",
        "$(touch MARK)",
        Quoting::Single,
        false,
    ),
    (
        // (`a.tarball`: an archive named as data, `a.tar`, may hold what any press fetched.)
        "echo hi > f && tar -cf a.tarball f && tar -xf a.tarball --to-command='cat >/dev/null; \
         echo \"$ACTIOND_ARG_V\"'; echo {{ v }}",
        "$(touch MARK)",
        Quoting::Single,
        false,
    ),
];

#[test]
#[ignore = "needs dash, bash, busybox, capsh, ssh, git and rsync: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn a_launched_shell_or_an_options_command_runs_the_value_and_is_refused() {
    check_rows(ROWS, 906);
}
