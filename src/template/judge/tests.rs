//! The verdict's tables (`judge`): each command with the refusal it must get, or none, as
//! text and as an `int` value; what the shells do with each is in tests/shells.

use super::super::{read_exec, read_shell};
use super::*;

/// One argument `a`, of `type: int` or text, read as `{{ a }}`, `$ACTIOND_ARG_A` or `$A`.
fn values(int: bool) -> Values {
    let mut v = Values {
        any: !int,
        ..Values::default()
    };
    if int {
        v.int.insert("a".into());
    }
    v.variables
        .insert("ACTIOND_ARG_A".into(), ("a".into(), false));
    v.variables.insert("A".into(), ("a".into(), true));
    v
}

fn verdict(text: &str, int: bool) -> Result<(), String> {
    let (_, analysis) = read_shell(text).map_err(|e| e.message)?;
    judge(text, &analysis, &values(int)).map_err(|why| why.to_string())
}

/// Each row: a command, whether it is refused with a text argument (and the reason's
/// words), and whether with an `int` one (an integer is safe where a value is read again,
/// but a placeholder stays refused where the lexer refuses every value).
#[test]
fn a_value_read_again_is_refused_unless_it_is_an_integer() {
    let table: &[(&str, Option<&str>, bool)] = &[
        // `hash -p` makes a name run another program (fe30t F11).
        (
            "bash -c 'hash -p /bin/sh rm; rm -c \"$1\"' sh {{ a }}",
            Some("`hash -p`"),
            false,
        ),
        // bash's indirection through a positional parameter (fe30s F5).
        (
            "bash -c 'echo \"${!1}\"' sh {{ a }}",
            Some("`${!…}`"),
            false,
        ),
        (
            "bash -c 'echo \"${!@}\"' sh {{ a }}",
            Some("`${!…}`"),
            false,
        ),
        ("bash -c 'echo \"${!0}\"' {{ a }}", Some("`${!…}`"), false),
        (
            "bash -c 'echo $(( ${!#} * 60 ))' sh {{ a }}",
            Some("`$(( ))`"),
            false,
        ),
        ("bash -c 'echo \"${!#}\"' sh {{ a }}", None, false),
        // A value written into a file that the command then runs or splits (fe30i F01, F14).
        (
            "printf '%s\\n' {{ a }} > job.sh && sh job.sh",
            Some("the file `job.sh`, which line 1 writes a value into"),
            false,
        ),
        (
            "echo {{ a }} > f; chmod +x f; ./f",
            Some("the file `f`"),
            false,
        ),
        (
            "printf '%s\\n' \"$A\" > s.sh; . ./s.sh",
            Some("the file `s.sh`"),
            false,
        ),
        (
            "printf '%s\\n' {{ a }} | tee s.sh; bash s.sh",
            Some("`s.sh`"),
            false,
        ),
        (
            "printf '%s\\n' {{ a }} > list; xargs -a list rm -f",
            Some("the file `list`"),
            false,
        ),
        (
            "printf %s {{ a }} > \"$F\"; sh job.sh",
            Some("an expansion makes"),
            false,
        ),
        (
            "printf %s {{ a }} > out.txt; sh ./deploy.sh; ./run",
            None,
            false,
        ),
        ("date > job.sh; sh job.sh", None, false),
        // Written after it ran: the next press runs it; a `.sh` is run by its name anyway.
        (
            "sh job.sh; printf %s {{ a }} > job.sh",
            Some("run as code by convention"),
            false,
        ),
        // A file not known to hold data may be run by the next press, or by anyone.
        (
            "sh job; printf %s {{ a }} > job",
            Some("not known to hold data"),
            false,
        ),
        // bash expands the target of `>&` a second time.
        ("p >& \"$ACTIOND_ARG_A\"", Some("target of `>&`"), false),
        ("p 1>&$A", Some("target of `>&`"), false),
        ("p >&{{ a }}", Some("target of `>&`"), true),
        ("echo >&2; echo {{ a }}", None, false),
        // `[[ ]]` with shell operators inside: dash and ash read them as the shell's.
        (
            "[[ x == y || z ]]; echo {{ a }}",
            Some("inside `[[ ]]`"),
            true,
        ),
        ("[[ {{ a }} == x && y ]]", Some("inside `[[ ]]`"), true),
        ("[[ x < y ]]; p $(( A ))", Some("is read after"), false),
        // A copy of the value read after the point where the model stops.
        (
            "x={{ a }}; alias l=ls; rm $x",
            Some("$x is read after"),
            false,
        ),
        (
            "x=$A; shopt -s extglob; rm \"$x\"",
            Some("$x is read after"),
            false,
        ),
        (
            "x=$A; shopt -s extglob; rm \"$\\\nx\"",
            Some("$x is read after"),
            false,
        ),
        ("x=1; echo \"$A\"; alias l=ls; rm $x", None, false),
        ("[[ {{ a }} == x ]] || echo {{ a }}", None, false),
        // dash reads `cmd &> f w` as `cmd &` and `> f w`.
        ("p &> /dev/null {{ a }}", Some("`&>`"), true),
        ("echo {{ a }} &>/dev/null", None, false),
        // `for NAME do` without `in`: the body is commands like any other.
        ("for x do eval {{ a }}; done", Some("`eval`"), true),
        (
            "set -- {{ a }}; for x do let y=$x; done",
            Some("`let`"),
            false,
        ),
        // bash evaluates a variable's value in arithmetic again.
        ("echo $(( ACTIOND_ARG_A + 1 ))", Some("$(( ))"), false),
        ("echo $(( A * 60 ))", Some("$(( ))"), false),
        ("echo $(( $A ))", Some("$(( ))"), false),
        ("(( A > 1 )) && p", Some("(( ))"), false),
        ("let x=A", Some("`let`"), false),
        ("x[A]=1", Some("subscript"), false),
        ("[[ $A -eq 1 ]]", Some("arithmetic comparison"), false),
        ("echo ${x:A}", Some("arithmetic"), false),
        ("m={{ a }}; echo $(( m ))", Some("$(( ))"), false),
        ("q() { p $(( $1 )); }; q {{ a }}", Some("$(( ))"), false),
        ("[ \"$A\" -gt 3 ] && p", None, false),
        ("echo $(( 1 + 2 )) {{ a }}", None, false),
        // A bare name left as text for another shell, which has no such variable.
        ("echo '$A'", Some("as text"), true),
        ("sh -c 'echo $A'", Some("as text"), true),
        ("sh -c 'echo \"$ACTIOND_ARG_A\"'", None, false),
        ("sh -c 'echo $(( ACTIOND_ARG_A ))'", Some("$(( ))"), false),
        // Prefixes that hide the command: bash's `time` options, `command`, `builtin`.
        ("time -p eval echo {{ a }}", Some("`eval`"), true),
        ("time -- let x={{ a }}", Some("`let`"), true),
        ("time -p -- eval {{ a }}", Some("`eval`"), true),
        ("command -p eval {{ a }}", Some("`eval`"), true),
        ("builtin let x=$A", Some("`let`"), false),
        // A value in the environment of a program, which may read it as code.
        ("BASH_ENV={{ a }} bash -c :", Some("`BASH_ENV`"), false),
        (
            "GIT_SSH_COMMAND=\"$ACTIOND_ARG_A\" git fetch",
            Some("environment"),
            false,
        ),
        ("export ENV={{ a }}; sh -i", Some("`ENV`"), false),
        ("declare -x ENV=$A", Some("`ENV`"), false),
        (
            "env -u X TAR_OPTIONS={{ a }} tar x",
            Some("`TAR_OPTIONS`"),
            false,
        ),
        ("/usr/bin/env -i LANG=C x={{ a }} cmd", Some("`x`"), false),
        ("x={{ a }}; echo \"$x\"", None, false),
        ("y={{ a }}; env echo {{ a }} \"$y\"", None, false),
        // A plain assignment to a name the shell may have got from its environment keeps it
        // exported (fe30i F06); after `set -a` every assignment is exported.
        ("PATH={{ a }}:/usr/bin:/bin; mytool", Some("`PATH`"), false),
        ("HOME=/srv/$A; git status", Some("`HOME`"), false),
        ("https_proxy={{ a }}; curl x", Some("`https_proxy`"), false),
        ("home=/srv/{{ a }}; ls \"$home\"", None, false),
        ("set -a; d={{ a }}; ls \"$d\"", Some("`d`"), false),
        ("set -eau; d={{ a }}", Some("`d`"), false),
        ("set -o allexport; d=$A", Some("`d`"), false),
        ("set -e; d={{ a }}; ls \"$d\"", None, false),
        ("d={{ a }}; set -a; ls \"$d\"", None, false),
        ("PATH=/usr/bin:/bin; ls {{ a }}", None, false),
        // Scripts handed to another shell.
        ("sh -c \"echo {{ a }}\"", Some("sh -c"), false),
        ("bash -c 'echo {{ a }}'", Some("sh -c"), false),
        ("nohup env bash -ec \"echo {{ a }}\"", Some("sh -c"), false),
        ("compgen -W {{ a }} x", Some("compgen"), true),
        ("eval \"echo {{ a }}\"", Some("eval"), true),
        ("sh -c 'echo \"$1\"' sh {{ a }}", None, false),
        ("sh -c 'eval \"$1\"' sh {{ a }}", Some("positional"), false),
        // Code reads even a command substitution that reads no variable: its command
        // may read a file or its input.
        ("eval \"$(date +%F)\"", Some("the output of `$( )`"), false),
        ("sh -c 'eval \"$0\"' {{ a }}", Some("`eval`"), false),
        // A shell that reads its script from its standard input (fe30g F6, F7): what
        // reaches it is code.
        ("echo {{ a }} | sh", Some("its standard input"), false),
        (
            "echo \"rm -- /x/$A\" | sh -x",
            Some("its standard input"),
            false,
        ),
        // An `echo` of plain words writes the author's own script (fe30v); any other
        // writer may print what it reads.
        ("echo ls | sudo -u pi bash", None, false),
        ("printf ls | sudo -u pi bash", Some("before `|`"), false),
        ("sh <<E\nrm $A\nE", Some("its standard input"), false),
        (
            "sh -s -- \"$A\" <<E\nrm \\$1\nE",
            Some("its standard input"),
            false,
        ),
        (". /dev/stdin <<E\n$A\nE", Some("standard input"), false),
        ("source /dev/stdin <<< \"$A\"", Some("$A holds"), false),
        ("bash <<< {{ a }}", Some("its standard input"), false),
        (
            "sh /dev/stdin <<E\n$A\nE",
            Some("its standard input"),
            false,
        ),
        (
            "bash /proc/self/fd/0 <<E\n$A\nE",
            Some("its standard input"),
            false,
        ),
        (
            "sh /dev/fd/3 3<<E\n$A\nE",
            Some("its standard input"),
            false,
        ),
        (
            "BASH_ENV=/dev/stdin bash -c : <<E\n$A\nE",
            Some("`BASH_ENV`"),
            false,
        ),
        // What the commands of `<( )` write is the file's text.
        (
            "bash <(echo \"$A\")",
            Some("the script file a shell runs"),
            false,
        ),
        (
            ". <(printf %s \"$A\")",
            Some("the file `.` reads as code"),
            false,
        ),
        (". <(date)", Some("`<( )`"), false),
        ("{ sh; } <<E\n$A\nE", Some("outside the command"), false),
        ("echo \"$A\" | at now", Some("`at`"), false),
        // fe30v: an `echo` of plain words writes the author's own script (read as one).
        (
            "echo /usr/local/bin/report | at \"$A\"",
            Some("does not know `at`"),
            false,
        ),
        ("echo /usr/local/bin/report | sh; echo \"$A\"", None, false),
        ("echo 'eval \"$ACTIOND_ARG_A\"' | sh", Some("`eval`"), false),
        ("echo 'a\\nb' | sh; echo \"$A\"", Some("before `|`"), false),
        ("echo -e x | sh; echo \"$A\"", Some("before `|`"), false),
        ("echo \"$(cat /srv/x)\" | sh", Some("`$( )`"), false),
        ("sh <<'E'\nrm -- \"$ACTIOND_ARG_A\"\nE", None, false),
        ("sh -s -- \"$A\" <<'E'\nrm -- \"$1\"\nE", None, false),
        (
            "sh <<'E'\neval \"$ACTIOND_ARG_A\"\nE",
            Some("`eval`"),
            false,
        ),
        ("sh < /opt/job.sh; echo \"$A\"", None, false),
        ("sh /usr/lib/x/job.sh \"$A\"", Some("does not know"), false),
        ("sh /opt/job.sh \"$A\"", None, false),
        ("sh -- \"$A\"", Some("script file"), false),
        ("sh \"$A\" x", Some("`sh -c`"), false),
        ("echo \"$A\" | grep -q sh", None, false),
        // Programs that hand an argument to `sh -c` (F8), in their own words.
        ("flock /run/l -c \"rm {{ a }}\"", Some("`flock -c`"), false),
        ("flock -w 5 /run/l -c 'p $(( A ))'", Some("$(( ))"), false),
        ("flock /run/l rm -- {{ a }}", None, false),
        ("script -qc \"p $A\" /dev/null", Some("`script -c`"), false),
        ("sg root \"p $A\"", Some("`sg`"), false),
        ("sg root -c 'p $(( ACTIOND_ARG_A ))'", Some("$(( ))"), false),
        ("watch -n 5 \"p $A\"", Some("`watch`"), false),
        ("watch -x echo \"$A\"", Some("does not know"), false),
        ("ssh -i k pi@host \"p $A\"", Some("other host"), false),
        ("ssh pi@host echo {{ a }}", Some("other host"), false),
        ("ssh pi@host uptime; echo \"$A\"", None, false),
        ("trap 'p $(( ACTIOND_ARG_A ))' EXIT", Some("$(( ))"), false),
        ("trap 'rm -f -- \"$ACTIOND_ARG_A\"' EXIT", None, false),
        (
            "printf '%s\\n' \"$A\" | xargs -I{} sh -c 'p {}'",
            Some("paste"),
            false,
        ),
        ("find /srv -exec sh -c 'p {}' \\;", Some("paste"), false),
        (
            "find /srv -exec sh -c 'echo \"$1\"' sh {} \\; ; echo \"$A\"",
            None,
            false,
        ),
        // xargs splits what it reads into arguments (F9), unless items end in NUL.
        (
            "printf '%s\\n' \"$A\" | xargs rm -f",
            Some("`xargs`"),
            false,
        ),
        ("xargs rm -f <<E\n$A\nE", Some("`xargs`"), false),
        ("xargs rm -f <<< {{ a }}", Some("`xargs`"), false),
        ("printf '%s\\0' \"$A\" | xargs -0 rm -f --", None, false),
        (
            "find /srv -print0 | xargs -r0 rm -f; echo \"$A\"",
            None,
            false,
        ),
        // bash's arithmetic follows a name to its value (F10).
        (
            "m=n; n=$A; echo $(( m ))",
            Some("$m names a variable"),
            false,
        ),
        ("m=ACTIOND_ARG_A; echo $(( m ))", Some("$m names"), false),
        ("m=ACTIOND_ARG_A; [[ m -gt 0 ]]", Some("$m names"), false),
        ("m=A; a[m]=1", Some("$m names"), false),
        ("m='n + 1'; n={{ a }}; let x=m", Some("$m names"), false),
        ("local m=n; n=$A; (( m ))", Some("$m names"), false),
        (
            "for m in n; do n=$A; echo $(( m )); done",
            Some("$m names"),
            false,
        ),
        (
            "bash -c 'm=n; n=$1; echo $(( m ))' sh \"$A\"",
            Some("$m names"),
            false,
        ),
        ("m=n; n=3; echo $(( m )) \"$A\"", None, false),
        ("m=m; echo $(( m )) \"$A\"", None, false),
        // bash's `${x@P}` runs `$( )` in the value (F11).
        ("echo \"${A@P}\"", Some("prompt expansion"), false),
        (
            "bash -c 'echo \"${1@P}\"' sh \"$A\"",
            Some("prompt expansion"),
            false,
        ),
        ("echo \"${A@Q}\" \"${A@E}\"", None, false),
        // A value as the program itself (F14).
        (
            "{{ a }} --version",
            Some("the program the command runs"),
            false,
        ),
        ("\"$A\" --version", Some("the program"), false),
        ("command \"$A\"", Some("the program"), false),
        ("env \"$A\"", Some("the program"), false),
        ("exec \"$ACTIOND_ARG_A\"", Some("the program"), false),
        (
            "nohup timeout -s KILL 5 {{ a }}",
            Some("the program"),
            false,
        ),
        ("sudo -u pi {{ a }} x", Some("the program"), false),
        ("x=$A; $x", Some("the program"), false),
        ("$CMD -v; env x=1 echo \"$A\"", None, false),
        // GNU parallel joins its command's words and runs them with a shell; what follows
        // `:::` it quotes into the command, or runs when it has no command.
        ("parallel rm \"$A\" ::: 1", Some("GNU `parallel`"), false),
        (
            "parallel -j 4 \"p $A\" ::: 1",
            Some("GNU `parallel`"),
            false,
        ),
        ("parallel ::: \"$A\"", Some("GNU `parallel`"), false),
        ("echo \"$A\" | parallel", Some("GNU `parallel`"), false),
        ("parallel -j 4 rm -- {} ::: \"$A\"", None, false),
        ("echo \"$A\" | parallel rm --", None, false),
        (
            "parallel -q rm -- \"$A\" ::: 1",
            Some("does not know"),
            false,
        ),
        // `su USER` and `ssh HOST` with no command run their standard input in a shell; so
        // does a shell behind `docker exec -i`.
        ("echo \"$A\" | su pi", Some("`su USER`"), false),
        ("su - pi <<E\n$A\nE", Some("`su USER`"), false),
        ("echo \"$A\" | runuser pi", Some("`su USER`"), false),
        ("echo \"$A\" | su -c 'cat > /tmp/x.txt' pi", None, false),
        ("echo \"$A\" | runuser -u pi -- cat", None, false),
        ("echo \"$A\" | ssh pi@host", Some("`ssh HOST`"), false),
        ("echo \"$A\" | ssh -n pi@host; p", None, false),
        // What reaches ssh's input reaches the command it runs on the other host: a value
        // written into a file there is held to the data-file rule as here.
        (
            "echo \"$A\" | ssh pi@host 'cat > f'",
            Some("the file `f`"),
            false,
        ),
        (
            "echo \"$A\" | ssh pi@host 'cat > /srv/notes/f.txt'",
            None,
            false,
        ),
        (
            "echo \"$A\" | ssh pi@host sh",
            Some("standard input"),
            false,
        ),
        (
            "echo \"$A\" | docker exec -i -u pi c sh",
            Some("standard input"),
            false,
        ),
        (
            "echo \"$A\" | podman exec -it c bash -s",
            Some("standard input"),
            false,
        ),
        // Any other program there by the input rule: psql's `\\!` runs commands.
        (
            "echo \"$A\" | docker exec -i c psql db",
            Some("standard input"),
            false,
        ),
        ("echo \"$A\" | docker exec -i c tee /tmp/x.txt", None, false),
        ("echo \"$A\" | docker exec c sh", None, false),
        (
            "echo \"$A\" | docker run -i alpine",
            Some("container image"),
            false,
        ),
        // The shells expand PS4 (`$( )` and all) for a line `set -x` traces.
        ("PS4=\"$A\"; set -x; p", Some("`PS4`"), false),
        ("PS4=\"+ {{ a }} \"; set -x; p", Some("`PS4`"), false),
        ("export PS4=$A; bash -x /opt/job.sh", Some("`PS4`"), false),
        ("read -r PS4; set -x; echo \"$A\"", Some("`PS4`"), false),
        ("bash -xc 'PS4=$1; p' sh \"$A\"", Some("`PS4`"), false),
        ("PS4='+ '; set -x; echo \"$A\"", None, false),
        // awk's `system()` and pipes run `sh -c` on what the program builds, data and all.
        (
            "awk -v x=\"$A\" 'BEGIN{system(\"ls \" x)}'",
            Some("`awk` program that runs commands"),
            false,
        ),
        (
            "echo \"$A\" | awk '{print | \"sh\"}'",
            Some("`awk` program"),
            false,
        ),
        (
            "awk -v x=\"$A\" 'BEGIN{print x}'",
            Some("does not know"),
            false,
        ),
        (
            "awk 'BEGIN{system(\"rm -- \\\"$ACTIOND_ARG_A\\\"\")}'; echo \"$A\"",
            None,
            false,
        ),
    ];
    let mut wrong = Vec::new();
    for &(text, why, int_refused) in table {
        let text_verdict = verdict(text, false);
        let ok = match (why, &text_verdict) {
            (None, Ok(())) => true,
            (Some(w), Err(e)) => e.contains(w),
            _ => false,
        };
        if !ok {
            wrong.push(format!("{text:?} as text: {text_verdict:?}"));
        }
        let int_verdict = verdict(text, true);
        if int_verdict.is_err() != int_refused {
            wrong.push(format!("{text:?} as int: {int_verdict:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each row: a command, and the unquoted variables that may hold argument `a`'s value
/// (`A` or `ACTIOND_ARG_A`), each as `name`, `name copied`, `name ?` (followed nowhere
/// actiond can see) and with ` IFS` when the command sets IFS. What the shells do with
/// each is in tests/shells (`copies`).
#[test]
fn a_value_copied_into_a_variable_is_followed_there() {
    let table: &[(&str, &[&str])] = &[
        ("rm $A", &["A"]),
        ("x=$A; rm $x", &["x copied"]),
        ("x={{ a }}; rm $x", &["x copied"]),
        ("x=\"$ACTIOND_ARG_A\"; rm $x", &["x copied"]),
        ("x=${A%.txt}; y=${z:-$x}; rm $y", &["y copied"]),
        ("x=$A; x=$x$x; rm $x", &["x copied"]),
        ("f() { local x=\"$A\"; rm $x; }", &["x copied"]),
        ("export x=\"$A\"; rm $x", &["x copied"]),
        (
            "set -- \"$A\"; rm $1 $@ $*",
            &["* copied", "1 copied", "@ copied"],
        ),
        ("set -- \"$A\"; for x do rm $x; done", &["x copied"]),
        ("for x in \"$A\"; do rm $x; done", &["x copied"]),
        ("f() { rm $1; }; f \"$A\"", &["1 ?"]),
        ("read x <<E\n$A\nE\nrm $x", &["x ?"]),
        ("echo \"$A\" | { read -r x; rm $x; }", &["x ?"]),
        ("x=$(echo \"$A\"); rm $x", &["x ?"]),
        ("printf -v x %s \"$A\"; rm $x", &["x ?"]),
        ("x=A; rm ${!x}", &["!x ?"]),
        ("rm \"$A\" $REPLY $_", &["REPLY ?", "_ ?"]),
        ("IFS=.; rm $A", &["A IFS"]),
        // A script a shell reads from its standard input is read like `sh -c`'s.
        ("sh <<'E'\nrm $ACTIOND_ARG_A\nE", &["ACTIOND_ARG_A"]),
        ("sh -s -- \"$A\" <<'E'\nrm $1\nE", &["1 copied"]),
        ("sh /dev/stdin x \"$A\" <<'E'\nrm $2\nE", &["2 copied"]),
        ("bash <<< 'rm $ACTIOND_ARG_A'", &["ACTIOND_ARG_A"]),
        ("trap 'rm $ACTIOND_ARG_A' EXIT", &["ACTIOND_ARG_A"]),
        ("export IFS; x=$A; rm $x", &["x copied IFS"]),
        ("for IFS in .; do rm \"$A\" $1; done", &[]),
        // A literal, a number, arithmetic, or a quoted use: nothing.
        ("x=/tmp; n=3; rm $x/$n \"$A\"", &[]),
        ("for f in a b *.log; do rm $f \"$A\"; done", &[]),
        ("x=$((1 + 2)); rm $x \"$A\"", &[]),
        ("x=$A; set -- \"$x\"; rm \"$x\" \"$@\" \"$1\"", &[]),
        ("rm $IFSX \"$A\"", &[]),
        // An unquoted command substitution whose command reads a value: its output is
        // split (all four print <old><-r><victim>: tests/shells, `copies`). One that reads
        // none, and a copy of it, hold no value.
        ("rm $(printf %s \"$A\")", &["the output of `$( )` ?"]),
        (
            "rm `basename \"$A\"`",
            &["the output of a backtick command ?"],
        ),
        (
            "for f in $(echo \"$A\"); do rm \"$f\"; done",
            &["the output of `$( )` ?"],
        ),
        ("x=$A; rm $(basename \"$x\")", &["the output of `$( )` ?"]),
        ("cd \"$A\"; rm $(pwd)", &["the output of `$( )` ?"]),
        ("rm $(cat <<E\n$A\nE\n)", &["the output of `$( )` ?"]),
        ("y=$(echo \"$A\"); rm \"$(printf %s \"$A\")\" \"$y\"", &[]),
        ("rm x=$(echo \"$A\")", &["the output of `$( )` ?"]),
        (
            "d=$(date +%F); rm $d b-$(date +%F).tar `hostname` \"$A\"",
            &[],
        ),
        ("x=/tmp; rm $(basename $x) \"$A\"", &[]),
        // A command substitution that reads no variable, where the command wrote a value to
        // a file or a pipe its command may read.
        (
            "printf %s \"$A\" > f; rm $(cat f)",
            &["the output of `$( )` ?"],
        ),
        (
            "printf %s \"$A\" > f; rm $(< f)",
            &["the output of `$( )` ?"],
        ),
        ("printf %s \"$A\" > f; d=$(cat f); rm $d", &["d ?"]),
        (
            "printf %s \"$A\" | sh -c 'rm $(cat)'",
            &["the output of `$( )` ?"],
        ),
        (
            "cat > f <<E\n$A\nE\nrm `cat f`",
            &["the output of a backtick command ?"],
        ),
        (
            "printf %s \"$A\" > f; d=$(cat f); rm -- \"$d\" \"$(cat f)\"",
            &[],
        ),
        ("echo \"$A\" >/dev/null; rm b-$(date +%F).tar", &[]),
        // The value of `${x:-WORD}`, and what `${x:=WORD}` assigns.
        ("rm ${x:-$A}", &["A"]),
        ("rm ${x:+${ACTIOND_ARG_A}}", &["ACTIOND_ARG_A"]),
        (": \"${f:=$A}\"; rm $f", &["f copied"]),
        (": \"${f=$ACTIOND_ARG_A}\"; rm $f", &["f copied"]),
        ("x=y; : ${x:+${y:=$A}}; rm $y", &["A", "y copied"]),
        (": ${f:=/tmp}; rm $f \"$A\"", &[]),
        // A line continuation inside the name.
        ("rm $ACTIOND_ARG_\\\nA", &["ACTIOND_ARG_A"]),
        // An inner shell's `$0` is the word after its script.
        ("sh -c 'rm $0' \"$A\"", &["0 copied"]),
        ("sh -c 'rm $0 \"$1\"' sh \"$A\"; rm $0", &[]),
        // `read -s` and `mapfile -t` take no word: the name after them is written.
        ("read -rs x <<E\n$A\nE\nrm $x", &["x ?"]),
        ("read -r -s x; rm $x", &["x ?"]),
        ("read -rp '> ' x; rm $x", &["x ?"]),
        ("read -t5 x; rm $x", &["x ?"]),
        ("read -rt 5 x; rm $x", &["x ?"]),
        ("read -p x y; rm $x \"$A\"", &[]),
        ("mapfile -t a <<< \"$A\"; rm ${a[@]}", &["a ?"]),
        ("readarray -d '' -t a; rm ${a[0]}", &["a ?"]),
        ("mapfile -C f -c 1 a; rm $f \"$A\"", &[]),
        // bash's stack of directories.
        ("pushd \"/tmp/$A\"; rm ${DIRSTACK[0]}", &["DIRSTACK ?"]),
    ];
    let mut wrong = Vec::new();
    for &(text, want) in table {
        let (_, analysis) = read_shell(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        let got: Vec<String> = unquoted(&analysis, &values(false))
            .into_iter()
            .map(|u| {
                let mut s = u.variable.clone();
                if u.unknown.is_some() {
                    s.push_str(" ?");
                } else if u.copied {
                    s.push_str(" copied");
                }
                if u.ifs {
                    s.push_str(" IFS");
                }
                s
            })
            .collect();
        if got != want {
            wrong.push(format!("{text:?}: {got:?}"));
        }
    }
    // Without any value the command receives, what actiond cannot follow holds none.
    let (_, analysis) = read_shell("read x; rm $x").unwrap();
    assert!(unquoted(&analysis, &Values::default()).is_empty());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn an_exec_argv_that_starts_a_shell_has_its_script_read() {
    let table: &[(&[&str], bool)] = &[
        (&["sh", "-c", "echo {{ a }}"], true),
        (&["/usr/bin/env", "bash", "-c", "x {{ a }}"], true),
        (&["sh", "-c", "echo $(( ACTIOND_ARG_A ))"], true),
        (&["sh", "-c", "echo \"$1\"", "sh", "{{ a }}"], false),
        (&["echo", "{{ a }}"], false),
        // Programs that hand a word to `sh -c` (F8), and a value as the program (F14).
        (&["flock", "/run/l", "-c", "rm {{ a }}"], true),
        (&["flock", "/run/l", "-c", "rm $(( ACTIOND_ARG_A ))"], true),
        (&["ssh", "host", "rm", "{{ a }}"], true),
        (&["script", "-qc", "x {{ a }}"], true),
        (&["find", ".", "-exec", "sh", "-c", "rm {}", ";"], true),
        (&["{{ a }}"], true),
        (&["env", "{{ a }}", "x"], true),
        (&["sh", "{{ a }}"], true),
        // `env NAME=VALUE` in `exec:` is the program's environment, as in `shell:`.
        (&["env", "X={{ a }}", "rm", "--", "{{ a }}"], true),
        (&["env", "-u", "X", "rm", "--", "{{ a }}"], false),
        (&["flock", "/run/l", "rm", "--", "{{ a }}"], false),
    ];
    for &(argv, refused) in table {
        let argv: Vec<String> = argv.iter().map(|s| (*s).to_string()).collect();
        let got = judge("", &read_exec(&argv), &values(false));
        assert_eq!(got.is_err(), refused, "{argv:?}: {got:?}");
    }
}

/// Every refusal's frame word for word, as `--check-config` shows it.
#[test]
fn refusals_word_for_word() {
    let how = Rereading::Arithmetic;
    let a = Placeholder::Argument("a".into());
    let cases = [
        (
            Refusal::Reread {
                how: Reaches::Placeholder(a.clone()),
                place: "`$(( ))`".into(),
                line: 2,
                rereading: how,
            },
            format!(
                "{a} reaches it: `$(( ))` (line 2), which {}: {}",
                how.does(),
                how.hint()
            ),
        ),
        (
            Refusal::Reread {
                how: Reaches::Variable {
                    name: "A".into(),
                    argument: "a".into(),
                },
                place: "`let`".into(),
                line: 1,
                rereading: how,
            },
            format!(
                "$A holds argument \"a\", and reaches it: `let` \
                 (line 1), which {}: {}",
                how.does(),
                how.hint()
            ),
        ),
        (
            Refusal::Reread {
                how: Reaches::MayHold("x".into()),
                place: "`let`".into(),
                line: 1,
                rereading: how,
            },
            format!(
                "$x may hold a value the command received, and reaches it: `let` (line 1), \
                 which {}: {}",
                how.does(),
                how.hint()
            ),
        ),
        (
            Refusal::Unexpanded {
                name: "A".into(),
                argument: "a".into(),
            },
            "$A stands where this shell leaves it as text (inside '…', or in a script \
             another shell runs), and that shell has argument \"a\" only as \
             $ACTIOND_ARG_A: write \"$ACTIOND_ARG_A\" there (never the bare name, which is \
             no environment variable)"
                .to_string(),
        ),
        (
            Refusal::AfterLost {
                variable: "A".into(),
                why: "an alias".into(),
                line: 3,
            },
            "$A is read after an alias (line 3), where actiond cannot tell how the shell \
             will read it (it could be arithmetic, which runs code in a value): rewrite \
             that part, or use `exec:`"
                .to_string(),
        ),
    ];
    for (why, words) in cases {
        assert_eq!(why.to_string(), words);
    }
}

/// What a file named as data holds is refused wherever a value would be, in an action with
/// no value of its own too (`Read::Stored`): any action, or an earlier press, may have
/// written a value into it (fe30r F2). Read as data it passes.
#[test]
fn what_a_data_file_holds_is_never_code_whatever_the_values() {
    let table: &[(&str, Option<&str>)] = &[
        ("eval \"$(cat /tmp/radio.txt)\"", Some("`/tmp/radio.txt`")),
        ("eval `cat notes.txt`", Some("`notes.txt`")),
        ("s=$(cat radio.txt); eval \"$s\"", Some("`radio.txt`")),
        ("s=$(cat radio.txt); t=$s; eval \"$t\"", Some("`radio.txt`")),
        ("export $(cat radio.txt); mpc play", Some("`radio.txt`")),
        ("sh -c \"$(cat notes.txt)\"", Some("`notes.txt`")),
        ("$(cat prog.txt) --now", Some("`prog.txt`")),
        ("n=$(cat count.txt); echo $((n + 1))", Some("`count.txt`")),
        ("cat notes.txt | sh", Some("`notes.txt`")),
        ("head -n 5 ./notes.txt | bash", Some("`./notes.txt`")),
        ("grep -v '^#' radio.txt | . /dev/stdin", Some("`radio.txt`")),
        ("cat < notes.txt | sh", Some("`notes.txt`")),
        ("cat notes.txt > /etc/default/kiosk", Some("`notes.txt`")),
        ("sed 's/x/y/' --in=notes.txt | sh", Some("`notes.txt`")),
        ("echo \"$(cat notes.txt)\"", None),
        ("n=$(cat count.txt); echo \"count $n\"", None),
        ("grep -c x notes.txt | sh", None),
        ("cat notes.txt > copy.txt", None),
        ("tee notes.txt < /dev/null | sh", None),
        ("eval \"$(cat settings.sh)\"", None),
        // Through a variable that holds the file's name.
        ("JOB=/srv/job.txt; sh \"$JOB\"", Some("`/srv/job.txt`")),
        (
            "for f in /srv/jobs/*.txt; do . \"$f\"; done",
            Some("`/srv/jobs/*.txt`"),
        ),
        (
            "F=/srv/radio.txt; eval \"$(cat \"$F\")\"",
            Some("`/srv/radio.txt`"),
        ),
        (
            "F=/srv/radio.txt; G=$F; cat \"$G\" | sh",
            Some("`/srv/radio.txt`"),
        ),
        ("F=/srv/radio.txt; sh < \"$F\"", Some("`/srv/radio.txt`")),
        ("F=/srv/radio.txt; cat \"$F\"; wc -l < \"$F\"", None),
        ("F=/srv/job.sh; sh \"$F\"", None),
        (
            "find /srv/jobs -name '*.txt' -exec sh {} \\;",
            Some("`*.txt`"),
        ),
        ("find /srv/jobs -name '*.txt' -exec cat {} +", None),
        ("find /srv/jobs -name '*.sh' -exec sh {} \\;", None),
        // What `read` and `mapfile` read from such a file (fe30t F1).
        (
            "read -r l < /srv/note.txt; eval \"$l\"",
            Some("`/srv/note.txt`"),
        ),
        (
            "while read -r l; do $l; done < /srv/note.txt",
            Some("`/srv/note.txt`"),
        ),
        (
            "cat /srv/note.txt | while read -r l; do eval \"$l\"; done",
            Some("`/srv/note.txt`"),
        ),
        (
            "exec < /srv/note.txt; read -r l; eval \"$l\"",
            Some("`/srv/note.txt`"),
        ),
        (
            "mapfile -t a < /srv/note.txt; eval \"${a[0]}\"",
            Some("`/srv/note.txt`"),
        ),
        ("read -r PATH < /srv/note.txt; ls", Some("`/srv/note.txt`")),
        (
            "while read -r l; do echo \"got $l\"; done < /srv/note.txt",
            None,
        ),
        // Named where the model stopped, in a script of its own too (fe30t F9, F10).
        (
            "a=(x y); echo \"${a[$(< /srv/n.txt)]}\"",
            Some("`/srv/n.txt`"),
        ),
        (
            "bash -c 'a=(x); echo \"${a[$(< /srv/n.txt)]}\"'",
            Some("`/srv/n.txt`"),
        ),
        ("sh -c '. /srv/f.txt'", Some("`/srv/f.txt`")),
        // Behind a wrapper actiond does not know; given to awk or sed that run commands.
        ("systemd-run --wait sh /srv/f.txt", Some("`/srv/f.txt`")),
        (
            "awk '{ system(\"ping -c1 \" $1) }' /srv/hosts.txt",
            Some("`/srv/hosts.txt`"),
        ),
        ("sed 's/^/echo /e' /srv/f.txt", Some("`/srv/f.txt`")),
        ("rsync /srv/note.txt /srv/hook.sh", Some("`/srv/note.txt`")),
        ("awk '{ print $1 }' /srv/hosts.txt", None),
        // Settings that run code, read from such a file (fe30t F7).
        (
            "git -c include.path=/srv/note.txt status",
            Some("`/srv/note.txt`"),
        ),
        (
            "BASH_ENV=/srv/f.txt bash -c 'echo hi'",
            Some("`/srv/f.txt`"),
        ),
        ("env ENV=/srv/f.txt sh -c 'echo hi'", Some("`/srv/f.txt`")),
        ("git -c user.name=pi status", None),
        // Its lines as options (fe30t F4, F8), and as a shell's script on another host.
        (
            "while read -r f; do rm -f \"$f\"; done < /srv/list.txt",
            Some("`/srv/list.txt`"),
        ),
        (
            "while read -r f; do rm -f -- \"$f\"; done < /srv/list.txt",
            None,
        ),
        ("xargs -0 rm -f < /srv/list.txt", Some("`/srv/list.txt`")),
        ("xargs -0 rm -f -- < /srv/list.txt", None),
        ("ssh nas sh < /srv/cmd.txt", Some("`/srv/cmd.txt`")),
        // In a script of `sh -c` too.
        ("sh -c 'rm -f $(cat /srv/x.txt)'", Some("`/srv/x.txt`")),
        (
            "sh -c 'ssh \"$(cat /srv/h.txt)\" uptime'",
            Some("`/srv/h.txt`"),
        ),
        // fe30u: unpacked by Python, read by sqlite3's `.read`, a batch or patch file, an
        // environment file, a pattern that may match a data file.
        (
            "python3 -m zipfile -e /srv/dl/t.zip /srv/k",
            Some("`/srv/dl/t.zip`"),
        ),
        ("7zz x /srv/dl/t.zip", Some("`/srv/dl/t.zip`")),
        (
            "sqlite3 /srv/a.db \".read /srv/q.txt\"",
            Some("`/srv/q.txt`"),
        ),
        ("ip -force -batch /srv/net/r.txt", Some("`/srv/net/r.txt`")),
        ("sftp -b /srv/b.txt nas", Some("`/srv/b.txt`")),
        ("git apply /srv/p.txt", Some("`/srv/p.txt`")),
        (
            "docker run --env-file /srv/env.txt alpine true",
            Some("`/srv/env.txt`"),
        ),
        (
            "systemd-run -p EnvironmentFile=/srv/env.txt /bin/true",
            Some("`/srv/env.txt`"),
        ),
        (
            "for f in /srv/maint.d/*; do . \"$f\"; done",
            Some("`/srv/maint.d/*`"),
        ),
        ("sh /srv/notes.tx?", Some("`/srv/notes.tx?`")),
        ("find /srv/d -type f -exec sh {} \\;", Some("`*`")),
        ("for f in /etc/profile.d/*.sh; do . \"$f\"; done", None),
        ("find /srv/d -name '*.sh' -exec sh {} \\;", None),
        ("sqlite3 /srv/a.db \"select 1\"", None),
        (
            "systemctl edit --stdin app.service < /srv/n.txt",
            Some("`/srv/n.txt`"),
        ),
        (
            "gunzip -f /srv/dl/nightly.sh.gz && sh /srv/dl/nightly.sh",
            Some("`/srv/dl/nightly.sh.gz`"),
        ),
        ("gunzip /srv/backup/notes.txt.gz", None),
        ("gunzip -c /srv/dl/x.sh.gz > /srv/out/x.txt", None),
        (
            "for f in /srv/in/*.txt; do mv -- \"$f\" \"${f%.txt}\"; done",
            Some("`/srv/in/*.txt`"),
        ),
        // A name the author's text fixes as data (fe30t L3).
        ("cp /srv/notes.txt /srv/notes-$(date +%F).txt", None),
        ("sh /srv/notes-$(date +%F).txt", Some("`/srv/notes-*.txt`")),
        // Program text that runs what it reads from such a file.
        (
            "python3 -c 'exec(open(\"/srv/radio.txt\").read())'",
            Some("`/srv/radio.txt`"),
        ),
        (
            "perl -ne 'system($_)' /srv/hosts.txt",
            Some("`/srv/hosts.txt`"),
        ),
        (
            "python3 -c 'import json; print(json.load(open(\"/srv/s.json\"))[\"url\"])'",
            None,
        ),
        (
            "GIT_CONFIG_GLOBAL=/srv/g.txt git status",
            Some("`/srv/g.txt`"),
        ),
        ("LD_PRELOAD=/srv/lib.dat ls", Some("`/srv/lib.dat`")),
        (
            "git config --global include.path /srv/g.txt",
            Some("`/srv/g.txt`"),
        ),
        (
            "awk 'BEGIN { while ((getline l < \"/srv/v.txt\") > 0) system(l) }'",
            Some("`/srv/v.txt`"),
        ),
        (
            "bash -c 'mapfile -t -C eval -c 1 a < /srv/n.txt'",
            Some("`/srv/n.txt`"),
        ),
        (
            "read -r n < /srv/n.txt; a=(1 2); echo \"${a[n]}\"",
            Some("`/srv/n.txt`"),
        ),
    ];
    for &(text, want) in table {
        // Refused by `judge`, or, for a file run, sourced or listed, by `config::command`
        // from `Analysis::runs_data`.
        let got = read_shell(text).map_err(|e| e.message).and_then(|(_, a)| {
            judge(text, &a, &Values::default()).map_err(|w| w.to_string())?;
            if let Some((name, _, does)) = a.runs_data.first() {
                return Err(format!(
                    "{does} `{}`, a file named as data",
                    String::from_utf8_lossy(name)
                ));
            }
            // `config::command` reports these, with the variables resolved there.
            let leading = a
                .leading
                .iter()
                .filter_map(|(v, _)| a.stored(&Read::Variable(v.clone())));
            match a
                .data_words
                .iter()
                .map(|(n, _, _)| n.clone())
                .chain(leading)
                .next()
            {
                Some(name) => Err(format!("what `{name}`, a file named as data, holds")),
                None => Ok(()),
            }
        });
        match (got, want) {
            (Ok(()), None) => {}
            (Err(why), Some(words)) => {
                assert!(
                    why.contains(words) && why.contains("named as data"),
                    "{text}: {why}"
                );
            }
            (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
        }
    }
}
