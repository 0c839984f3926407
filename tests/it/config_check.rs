//! `actiond --check-config PATH`: exit 0 for a valid config (warnings
//! allowed), 2 for an invalid one, with every error printed with its YAML path. The configs
//! here are hand-written YAML, since the YAML itself is under test.

use std::time::Duration;

use crate::harness::{Finished, TempDir, run_binary};

/// `--check-config` only reads a file; it must finish long before this.
const BOUND: Duration = Duration::from_secs(20);

/// Writes `yaml` to a temp dir and runs `--check-config` on it.
pub(crate) fn check(yaml: &str) -> Finished {
    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, yaml).expect("write config");
    let path = path.to_str().expect("utf-8 temp path");
    run_binary(&["--check-config", path], dir.path(), BOUND)
}

/// Everything the run printed, stdout and stderr together (where messages go is not part
/// of the contract).
/// The check's error lines only: an action named in none of them loads (a warning does not
/// keep it from loading).
pub(crate) fn errors(out: &str) -> String {
    out.lines()
        .filter(|l| l.starts_with("error:"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn output(run: &Finished) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

pub(crate) fn assert_exit(run: &Finished, code: i32) {
    assert_eq!(
        run.status.code(),
        Some(code),
        "exit status {:?}; output:\n{}",
        run.status,
        output(run)
    );
}

const VALID: &str = "\
killGracePeriod: 1
maxOutputBytes: 4096
actions:
  - id: hello
    title: Hello
    shell: echo hello
    timeout: 5
  - title: Restart Docker
    exec: [\"true\"]
";

#[test]
fn valid_config_exits_0() {
    let run = check(VALID);
    assert_exit(&run, 0);
}

#[test]
fn unknown_key_is_a_warning_naming_it() {
    let run = check(&format!("{VALID}someFutureFeature: true\n"));
    assert_exit(&run, 0);
    assert!(
        output(&run).contains("someFutureFeature"),
        "the warning does not name the key:\n{}",
        output(&run)
    );
}

#[test]
fn zero_timeout_becomes_3_with_a_warning_at_its_yaml_path() {
    // OliveTin raises a timeout below 3 seconds to 3, and configs rely on it.
    let run = check("actions:\n  - id: a\n    title: A\n    shell: 'true'\n    timeout: 0\n");
    assert_exit(&run, 0);
    assert!(
        output(&run).contains("warning: actions[0].timeout: timeout 0 is below 3 seconds"),
        "no warning at `actions[0].timeout` in:\n{}",
        output(&run)
    );
}

#[test]
fn every_error_is_reported() {
    let yaml = "\
actions:
  - id: a
    title: A
    shell: 'true'
    timeout: 100000
  - id: b
    title: B
    shell: 'true'
  - id: c
    title: C
    shell: 'true'
    timeout: 100000
";
    let run = check(yaml);
    assert_exit(&run, 2);
    let out = output(&run);
    for path in ["actions[0].timeout", "actions[2].timeout"] {
        assert!(out.contains(path), "no `{path}` in:\n{out}");
    }
}

#[test]
fn wrong_type_exits_2_with_its_yaml_path() {
    let run =
        check(&format!("{VALID}maxOutputBytes: lots\n").replace("maxOutputBytes: 4096\n", ""));
    assert_exit(&run, 2);
    assert!(
        output(&run).contains("maxOutputBytes"),
        "no `maxOutputBytes` in:\n{}",
        output(&run)
    );
}

#[test]
fn duplicate_action_ids_exit_2() {
    let yaml = "\
actions:
  - id: same
    title: One
    shell: 'true'
  - id: same
    title: Two
    shell: 'true'
";
    let run = check(yaml);
    assert_exit(&run, 2);
    assert!(
        output(&run).contains("actions[1]"),
        "the error does not point at the duplicate:\n{}",
        output(&run)
    );
}

#[test]
fn malformed_yaml_exits_2() {
    let run = check("actions:\n  - id: a\n   title: [unclosed\n");
    assert_exit(&run, 2);
}

#[test]
fn missing_config_file_fails() {
    let dir = TempDir::new();
    let path = dir.path().join("absent.yaml");
    let run = run_binary(
        &["--check-config", path.to_str().expect("utf-8 temp path")],
        dir.path(),
        BOUND,
    );
    assert!(
        !run.status.success(),
        "a missing file passed the check:\n{}",
        output(&run)
    );
}

/// A directory with `n` actions in two overlay files, the second overriding each action of
/// the first by id, and the path of its config.
fn overridden_config(n: usize) -> (TempDir, String) {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("conf.d")).unwrap();
    for file in 0..2 {
        let mut text = String::from("actions:\n");
        for i in 0..n {
            text.push_str(&format!(
                "  - {{id: a{i}, title: 'A {file} {i}', shell: 'echo {i}'}}\n"
            ));
        }
        std::fs::write(dir.path().join(format!("conf.d/{file}.yaml")), text).unwrap();
    }
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, "overlay: conf.d\n").unwrap();
    let path = path.to_str().expect("utf-8 temp path").to_string();
    (dir, path)
}

/// The time one `--check-config` of `overridden_config(n)` takes.
fn check_time((dir, path): &(TempDir, String), n: usize) -> Duration {
    let began = std::time::Instant::now();
    let run = run_binary(&["--check-config", path], dir.path(), BOUND * 3);
    assert_exit(&run, 0);
    assert!(
        run.stdout.contains(&format!("valid ({n} actions)")),
        "{}",
        run.stdout
    );
    began.elapsed()
}

/// Reading a config is linear in its actions: twice the actions, each overridden by an
/// overlay, take well under three times as long (it was quadratic: 2 × 4,000 took 14 s on a
/// debug build, 2 × 2,000 5 s). A ratio, so that the machine's speed does not matter.
#[test]
fn checking_a_config_is_linear_in_its_actions() {
    // The two sizes take turns, three times each, and each keeps its fastest run: a burst of
    // load on a shared machine then slows one run of a size, not the size's figure.
    let (small_config, large_config) = (overridden_config(3_000), overridden_config(6_000));
    let (mut small, mut large) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        small = small.min(check_time(&small_config, 3_000));
        large = large.min(check_time(&large_config, 6_000));
    }
    assert!(
        large < small * 3,
        "2 x 3000 actions took {small:?}, 2 x 6000 {large:?}"
    );
}

/// A value copied into a variable and then used unquoted, and a command that sets IFS, split
/// the value into arguments (`old -r victim` and `x.-r.victim` give `rm` a `-r` in dash, bash
/// and busybox ash): each is refused at its action's path, naming the variable and why.
#[test]
fn a_copied_value_or_ifs_used_unquoted_is_refused_at_load() {
    let yaml = "\
actions:
  - title: copy
    shell: 'x=$NAME; rm -f $x'
    arguments: [{name: name, type: ascii_sentence}]
  - title: placeholder copy
    shell: 'x={{ name }}; rm -f $x'
    arguments: [{name: name, type: ascii_sentence}]
  - title: positional
    shell: 'set -- \"$NAME\"; rm -f $1'
    arguments: [{name: name, type: ascii_sentence}]
  - title: read
    shell: |
      read x <<EOF
      $NAME
      EOF
      rm -f $x
    arguments: [{name: name, type: ascii_sentence}]
  - title: ifs
    shell: 'IFS=.; rm -f $NAME'
    arguments: [{name: name, type: ascii_identifier}]
  - title: quoted
    shell: |
      x={{ name }}
      set -- \"$x\"
      for f in \"$@\"; do rm -f -- \"$f\"; done
    arguments: [{name: name, type: ascii_sentence}]
";
    let run = check(yaml);
    assert_exit(&run, 2);
    let out = output(&run);
    for (path, words) in [
        (
            "actions[0].shell",
            "$x on line 1 stands outside quotes and holds the value of argument \"name\" (copied into it)",
        ),
        (
            "actions[1].shell",
            "$x on line 1 stands outside quotes and holds the value of argument \"name\"",
        ),
        ("actions[2].shell", "$1 on line 1 stands outside quotes"),
        (
            "actions[3].shell",
            "$x on line 4 stands outside quotes and may hold a value the command received (what `read` reads)",
        ),
        (
            "actions[4].shell",
            "(the command sets IFS, so any character of a value may split it, whatever its type)",
        ),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(path) && l.contains(words))
            .unwrap_or_else(|| panic!("no `{path}` naming {words:?} in:\n{out}"));
        assert!(line.contains(words), "{path}: {line}");
        assert!(line.contains("write \""), "{path} gives no fix: {line}");
    }
    assert!(
        !out.contains("actions[5]"),
        "the quoted action was flagged:\n{out}"
    );
}

/// A value in a shell that a launcher starts (`start-stop-daemon --exec /bin/sh -- -c`,
/// `capsh -- -c`) or in a command an option holds (`tar --to-command=`, `ssh -o
/// ProxyCommand=`, `git -c core.sshCommand=`, `rsync -e`, `tar -I`, `find -exec`), in
/// `shell:` and `exec:` alike, is refused at its action's path, naming the place; the value as
/// data (a positional parameter of the inner script, an option that holds no command) loads.
#[test]
fn a_value_in_a_launched_shell_or_an_options_command_is_refused_at_load() {
    let yaml = "\
actions:
  - title: start-stop-daemon
    shell: start-stop-daemon --start --pidfile /run/dl.pid --make-pidfile --exec /bin/sh -- -c \"echo fetching {{ url }} > /tmp/log\"
    arguments: [{name: url, type: url}]
  - title: capsh
    exec: [capsh, --drop=cap_net_raw, --, -c, 'echo {{ url }}']
    arguments: [{name: url, type: url}]
  - title: tar
    shell: tar -xf a.tar --to-command=\"cat > /dev/null; echo done {{ url }}\"
    arguments: [{name: url, type: url}]
  - title: ssh
    shell: ssh -o BatchMode=yes -o ProxyCommand=\"echo proxy {{ url }}\" host uptime
    arguments: [{name: url, type: url}]
  - title: git
    exec: [git, -c, 'core.sshCommand=ssh -i {{ key }}', fetch]
    arguments: [{name: key, type: ascii_sentence}]
  - title: rsync
    shell: rsync -e \"ssh -p {{ port }}\" -a src/ host:dst/
    arguments: [{name: port, type: ascii_identifier}]
  - title: find
    exec: [find, /srv, -exec, '{{ tool }}', '{}', ';']
    arguments: [{name: tool, type: ascii_identifier}]
  - title: safe
    shell: |
      busybox start-stop-daemon -S -x /bin/sh -- -c 'echo \"$1\"' sh {{ url }}
      ssh -o ConnectTimeout=5 host uptime
      git -c user.name={{ key }} commit -m x
      rsync -a -e \"ssh -p 2222\" src/ host:dst/
      find /srv -name {{ key }} -exec rm -- {} +
    arguments:
      - {name: url, type: url}
      # git and find are no programs actiond knows: their `-c` and `-exec` rules still hold.
      - {name: key, type: ascii_identifier, allowUnknownProgram: true}
  - title: port as a number
    shell: rsync -e \"ssh -p {{ port }}\" -a src/ host:dst/
    arguments: [{name: port, type: int}]
";
    let run = check(yaml);
    assert_exit(&run, 2);
    let out = output(&run);
    for (path, words) in [
        ("actions[0].shell", "the script of `sh -c`"),
        ("actions[1].exec", "the script of `sh -c`"),
        ("actions[2].shell", "a command an option holds"),
        ("actions[3].shell", "a command an option holds"),
        ("actions[4].exec", "a command an option holds"),
        ("actions[5].shell", "a command an option holds"),
        // `find -exec PROG` runs PROG as a wrapper does.
        ("actions[6].exec", "the program the command runs"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(path) && l.contains(words))
            .unwrap_or_else(|| panic!("no `{path}` naming {words:?} in:\n{out}"));
        assert!(line.contains(words), "{path}: {line}");
    }
    for path in ["actions[7]", "actions[8]"] {
        assert!(!errors(&out).contains(path), "{path} was flagged:\n{out}");
    }
}

/// A value that may hold `/` and `..` in a directory a command takes code from (`cd DIR &&
/// ./deploy.sh`, `make -C DIR`, `git -C DIR`), in `shell:` and `exec:`, directly, through its
/// variable or a copy, is refused at its action's path; a type that holds no `/`, choices
/// without `..`, and the value elsewhere load.
#[test]
fn a_value_that_may_climb_out_of_a_directory_code_is_taken_from_is_refused_at_load() {
    let yaml = "\
actions:
  - title: cd
    shell: cd /srv/apps/{{ app }} && ./deploy.sh
    arguments: [{name: app, type: url}]
  - title: make
    exec: [make, -C, '/srv/apps/{{ app }}', status]
    arguments: [{name: app, type: very_dangerous_raw_string}]
  - title: copy
    shell: d=\"/srv/$APP\"; git -C \"$d\" pull
    arguments: [{name: app, type: password}]
  - title: safe
    shell: cd /srv/apps/{{ app }} && ./deploy.sh {{ url }}; make -C \"/srv/{{ pick }}\"
    arguments:
      - {name: app, type: ascii_identifier}
      - {name: url, type: url}
      - {name: pick, choices: [{value: web}, {value: db/main}]}
";
    let run = check(yaml);
    assert_exit(&run, 2);
    let out = output(&run);
    for (path, words) in [
        ("actions[0].shell", "the directory `cd` changes to"),
        ("actions[1].exec", "the directory a program works in"),
        ("actions[2].shell", "the directory a program works in"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(path) && l.contains(words))
            .unwrap_or_else(|| panic!("no `{path}` naming {words:?} in:\n{out}"));
        assert!(
            line.contains(words) && line.contains("`..`"),
            "{path}: {line}"
        );
    }
    assert!(
        !errors(&out).contains("actions[3]"),
        "the safe action was flagged:\n{out}"
    );
}

/// A value run as code by what the command starts besides `sh -c` (fe30g): a shell reading
/// its script from its standard input, a program handing a word to `sh -c` (`flock -c`),
/// `xargs` splitting what it reads, bash's arithmetic following a name and `${x@P}`, and a
/// value as the program itself. Each is refused at its action's path, naming the place; the
/// safe forms of the same commands load without a word.
#[test]
fn a_value_run_by_a_shells_stdin_another_program_or_as_the_program_is_refused_at_load() {
    let yaml = "\
actions:
  - title: pipe
    shell: 'echo {{ name }} | sh'
    arguments: [{name: name, type: ascii_identifier}]
  - title: stdin script
    shell: |
      printf '%s\\n' 'rm -f $1' | sh -s -- \"$NAME\"
    arguments: [{name: name, type: ascii_sentence}]
  - title: flock
    exec: [flock, /tmp/l, -c, 'rm -f $ACTIOND_ARG_NAME']
    arguments: [{name: name, type: ascii_sentence}]
  - title: xargs
    shell: 'printf \"%s\\n\" \"$NAME\" | xargs rm -f'
    arguments: [{name: name, type: ascii_sentence}]
  - title: arithmetic
    exec: [bash, -c, 'm=ACTIOND_ARG_NAME; echo $(( m ))']
    arguments: [{name: name, type: password}]
  - title: prompt
    exec: [bash, -c, 'echo \"${ACTIOND_ARG_NAME@P}\"']
    arguments: [{name: name, type: password}]
  - title: program
    exec: ['{{ name }}']
    arguments: [{name: name, type: ascii_identifier}]
  - title: safe
    shell: |
      sh -s -- \"$NAME\" <<'EOF'
      rm -f -- \"$1\"
      EOF
      printf '%s\\0' \"$NAME\" | xargs -0 rm -f --
    arguments: [{name: name, type: ascii_sentence}]
  - title: chosen program
    exec: ['{{ tool }}', --version]
    arguments: [{name: tool, choices: [{value: df}, {value: free}]}]
";
    let run = check(yaml);
    assert_exit(&run, 2);
    let out = output(&run);
    for (path, words) in [
        (
            "actions[0].shell",
            "reaches it: the script a shell reads from its standard input",
        ),
        (
            "actions[1].shell",
            "what the command before `|` writes may hold a value the command received",
        ),
        (
            "actions[2].exec",
            "$ACTIOND_ARG_NAME on line 1 stands outside quotes",
        ),
        (
            "actions[3].shell",
            "splits into arguments at blanks and quotes",
        ),
        (
            "actions[4].exec",
            "$m names a variable that bash's arithmetic evaluates",
        ),
        ("actions[5].exec", "bash's prompt expansion `${x@P}`"),
        ("actions[6].exec", "the program the command runs (its name)"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(path) && l.contains(words))
            .unwrap_or_else(|| panic!("no `{path}` naming {words:?} in:\n{out}"));
        assert!(line.contains(words), "{path}: {line}");
    }
    for path in ["actions[7]", "actions[8]"] {
        assert!(!errors(&out).contains(path), "{path} was flagged:\n{out}");
    }
}

/// Runs `yaml` through the check, which must refuse it, and checks each refusal's line: it
/// names `words` at its action's path; the actions in `clean` load without a word.
pub(crate) fn assert_refusals(yaml: &str, refused: &[(&str, &str)], clean: &[&str]) {
    let run = check(yaml);
    assert_exit(&run, 2);
    let out = output(&run);
    for (path, words) in refused {
        let line = out
            .lines()
            .find(|l| l.contains(path) && l.contains(words))
            .unwrap_or_else(|| panic!("no `{path}` naming {words:?} in:\n{out}"));
        assert!(line.contains(words), "{path}: {line}");
    }
    for path in clean {
        assert!(!errors(&out).contains(path), "{path} was flagged:\n{out}");
    }
}

/// Expansions the shells split although the value was never left bare: an unquoted `$( )`
/// whose command reads the value (and globs in it: an `email` value `*@x.y`), the value in
/// the word of `${x:-…}`, the copy `${f:=…}` makes, a name written across a line
/// continuation, an inner shell's `$0`, bash's `DIRSTACK`, and what `read -s` and
/// `mapfile -t` read (options once taken for ones that take a word), and a `$( )` reading a
/// file the command wrote the value to. Each is refused at its
/// action's path; the same words quoted load.
#[test]
fn a_value_split_by_a_substitution_a_default_a_continuation_or_an_inner_name_is_refused() {
    let yaml = "\
actions:
  - title: substitution
    shell: 'rm -f $(printf %s \"$NAME\")'
    arguments: [{name: name, type: ascii_sentence}]
  - title: default word
    shell: 'rm -f ${DIR:-$NAME}'
    arguments: [{name: name, type: ascii_sentence}]
  - title: assigned default
    shell: ': \"${f:=$NAME}\"; rm -f $f'
    arguments: [{name: name, type: ascii_sentence}]
  - title: continuation
    shell: |
      rm -f $ACTIOND_ARG_\\
      NAME
    arguments: [{name: name, type: ascii_sentence}]
  - title: inner name
    exec: [sh, -c, 'rm -f $0', '{{ name }}']
    arguments: [{name: name, type: ascii_sentence}]
  - title: dirstack
    shell: 'pushd \"/tmp/$NAME\"; rm -f ${DIRSTACK[0]}'
    arguments: [{name: name, type: ascii_sentence}]
  - title: read silent
    shell: |
      read -rs x <<EOF
      $NAME
      EOF
      rm -f $x
    arguments: [{name: name, type: ascii_sentence}]
  - title: mapfile
    shell: 'mapfile -t a <<< \"$NAME\"; rm -f ${a[@]}'
    arguments: [{name: name, type: ascii_sentence}]
  - title: glob
    shell: 'ls $(printf %s \"$NAME\")'
    arguments: [{name: name, type: email}]
  - title: file
    shell: 'printf %s \"$NAME\" > /tmp/f; rm -f $(cat /tmp/f)'
    arguments: [{name: name, type: ascii_sentence}]
  - title: file by another name
    shell: 'printf %s \"$NAME\" > /tmp/f; rm -f $(cat /tmp/\"$NAME\"/../f)'
    arguments: [{name: name, type: ascii_identifier}]
  - title: quoted
    shell: 'rm -f -- \"$(printf %s \"$NAME\")\" \"${DIR:-$NAME}\"; : \"${f:=$NAME}\"; rm -f -- \"$f\" \"$0\"'
    arguments: [{name: name, type: ascii_sentence}]
";
    let outside = "stands outside quotes";
    assert_refusals(
        yaml,
        &[
            (
                "actions[0].shell",
                "the output of `$( )` on line 1 stands outside quotes",
            ),
            ("actions[1].shell", "$NAME on line 1 stands outside quotes"),
            (
                "actions[2].shell",
                "$f on line 1 stands outside quotes and holds the value",
            ),
            (
                "actions[3].shell",
                "$ACTIOND_ARG_NAME on line 1 stands outside quotes",
            ),
            ("actions[4].exec", "$0 on line 1 stands outside quotes"),
            ("actions[5].shell", "$DIRSTACK on line 1"),
            ("actions[6].shell", "(what `read` reads)"),
            ("actions[7].shell", "(what `mapfile` reads)"),
            ("actions[8].shell", outside),
            // The file is named: its `$( )` prints what was written there.
            ("actions[9].shell", "(it reads $NAME)"),
            ("actions[10].shell", outside),
        ],
        &["actions[11]"],
    );
}

/// A quoted expansion that changes the value at the start of an argument may start with `-`
/// although no value does (`${NAME#*.}` of `backup.-rf`, `tr _ -` of `_rf`): the program
/// reads an option. Refused unless `--` or `./` comes before it or the argument allows a
/// leading dash.
#[test]
fn a_changed_value_at_the_start_of_an_argument_is_refused_unless_options_end_before_it() {
    let yaml = "\
actions:
  - title: strip
    shell: 'rm \"${NAME#*.}\" victim'
    arguments: [{name: name, type: ascii_identifier}]
  - title: replace
    shell: 'rm \"${NAME//_/-}\"'
    arguments: [{name: name, type: ascii_identifier}]
  - title: changed output
    shell: 'rm \"$(printf %s \"$NAME\" | tr _ -)\"'
    arguments: [{name: name, type: ascii_identifier}]
  - title: guarded
    shell: 'rm -- \"${NAME#*.}\" \"$(printf %s \"$NAME\" | tr _ -)\"; rm ./\"${NAME#*.}\"'
    arguments: [{name: name, type: ascii_identifier}]
  - title: allowed
    shell: 'rm \"$(printf %s \"$NAME\" | tr _ -)\"'
    arguments: [{name: name, type: ascii_identifier, allowLeadingDash: true}]
";
    let fix = "write `./` or `--` before it";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", fix),
            ("actions[1].shell", fix),
            (
                "actions[2].shell",
                "the output of `$( )` on line 1 reads a value and starts an argument",
            ),
            ("actions[2].shell", fix),
        ],
        &["actions[3]", "actions[4]"],
    );
}

/// The same value changed on its way through a file or `read`: a `$( )` that prints a file
/// the command wrote the value into (`rm "$(cat f)"`, a copy of it), and a line `read` reads
/// after the command wrote the value where it may read it (a `tr _ -` on the way, or the
/// blanks `read` drops: ` -rf` is `-rf`). Each is refused unless `--` ends the options;
/// a `read` of the author's own file, and a `$( )` of another file, load.
#[test]
fn a_value_changed_through_a_file_or_read_is_refused_at_the_start_of_an_argument() {
    let yaml = "\
actions:
  - title: file
    shell: 'printf %s \"$NAME\" > /tmp/n; rm \"$(cat /tmp/n)\"'
    arguments: [{name: name, type: ascii_identifier}]
  - title: file copy
    shell: 'printf %s \"$NAME\" | tr _ - > /tmp/n; x=$(< /tmp/n); rm \"$x\"'
    arguments: [{name: name, type: ascii_identifier}]
  - title: read
    shell: 'printf \"%s\\n\" \"$NAME\" | tr _ - | while read -r l; do rm \"$l\"; done'
    arguments: [{name: name, type: ascii_identifier}]
  - title: guarded
    shell: 'printf %s \"$NAME\" > /tmp/n; x=$(cat /tmp/n); rm -- \"$x\" \"$(cat /tmp/n)\"'
    arguments: [{name: name, type: ascii_identifier}]
  - title: own file
    shell: 'echo \"$NAME\"; while read -r h; do ping -c1 \"$h\"; done < /etc/boards; rm \"$(cat /etc/old)\"'
    arguments: [{name: name, type: ascii_identifier}]
";
    let fix = "write `./` or `--` before it";
    assert_refusals(
        yaml,
        &[
            (
                "actions[0].shell",
                "the output of `$( )` on line 1 reads a value and starts an argument",
            ),
            ("actions[1].shell", "$x holds what a command printed"),
            ("actions[2].shell", "$l holds what `read` read"),
            ("actions[2].shell", fix),
        ],
        &["actions[3]", "actions[4]"],
    );
}

/// Programs that run what they are given with a shell: GNU `parallel`'s command (and the
/// lines it reads when it has none), the standard input of `su USER` and `ssh HOST` with no
/// command and of a shell behind `docker exec -i`, the trace prompt `PS4`, `sg`, `script
/// -c`, `trap`, and awk's `system()`. Each is refused naming the place and the fix; the forms that hand the
/// value over as data load.
#[test]
fn a_value_a_program_runs_with_a_shell_is_refused_naming_the_fix() {
    let yaml = "\
actions:
  - title: parallel
    shell: 'parallel rm \"$NAME\" ::: x'
    arguments: [{name: name, type: ascii_sentence}]
  - title: parallel input
    shell: 'printf \"%s\\n\" \"$NAME\" | parallel'
    arguments: [{name: name, type: ascii_identifier}]
  - title: su
    shell: 'echo \"$NAME\" | su pi'
    arguments: [{name: name, type: ascii_identifier}]
  - title: ssh
    shell: 'echo \"$NAME\" | ssh pi@host'
    arguments: [{name: name, type: ascii_identifier}]
  - title: docker
    shell: 'echo \"$NAME\" | docker exec -i web sh'
    arguments: [{name: name, type: ascii_identifier}]
  - title: ps4
    shell: 'PS4=\"+ $NAME \"; set -x; uptime'
    arguments: [{name: name, type: password}]
  - title: sg
    shell: 'sg root \"rm -f -- /srv/$NAME\"'
    arguments: [{name: name, type: raw_string_multiline}]
  - title: script
    shell: \"script -qc 'rm -f $ACTIOND_ARG_NAME' /dev/null\"
    arguments: [{name: name, type: ascii_sentence}]
  - title: trap
    shell: \"trap 'rm -f $ACTIOND_ARG_NAME' EXIT\"
    arguments: [{name: name, type: ascii_sentence}]
  - title: awk
    shell: 'awk -v x=\"$NAME\" ''BEGIN { system(\"rm -f \" x) }'''
    arguments: [{name: name, type: ascii_sentence}]
  - title: safe
    shell: |
      awk 'BEGIN { system(\"rm -f -- \\\"$ACTIOND_ARG_NAME\\\"\") }'
      parallel rm -- {} ::: \"$NAME\"
      echo \"$NAME\" | su pi -c 'cat > /tmp/x'
      echo \"$NAME\" | ssh pi@host 'cat > x'
      echo \"$NAME\" | docker exec -i web cat
      PS4='+ '; set -x; echo \"$NAME\"
    arguments: [{name: name, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            (
                "actions[0].shell",
                "the command GNU `parallel` runs through a shell (give it the value after `:::`",
            ),
            (
                "actions[1].shell",
                "GNU `parallel` with no command reads from its standard input",
            ),
            (
                "actions[2].shell",
                "the shell of `su USER` reads from its standard input (give it the command with `-c`",
            ),
            (
                "actions[3].shell",
                "the login shell of `ssh HOST` reads from its standard input",
            ),
            (
                "actions[4].shell",
                "the script a shell reads from its standard input",
            ),
            ("actions[5].shell", "the shell's trace prompt `PS4`"),
            ("actions[5].shell", "write `PS4` out"),
            ("actions[6].shell", "the command of `sg`"),
            (
                "actions[7].shell",
                "$ACTIOND_ARG_NAME on line 1 stands outside quotes",
            ),
            (
                "actions[8].shell",
                "$ACTIOND_ARG_NAME on line 1 stands outside quotes",
            ),
            (
                "actions[9].shell",
                "the data of an `awk` program that runs commands",
            ),
        ],
        &["actions[10]"],
    );
}

/// `workingDirectory` (fe30h F6): a placeholder there is never filled in, so it is an error
/// at its path; a directory that is not there is a warning (it may be mounted later), and a
/// run then fails naming the directory, not the shell it never reached.
#[test]
fn a_working_directory_with_a_placeholder_is_refused_and_a_missing_one_named() {
    let run = check(
        "actions:\n  - title: placeholder\n    shell: pwd\n    workingDirectory: '/tmp/{{ x }}'\n    \
         arguments: [{name: x, type: ascii_identifier}]\n",
    );
    assert_exit(&run, 2);
    let out = output(&run);
    assert!(
        out.contains("actions[0].workingDirectory") && out.contains("holds a placeholder"),
        "{out}"
    );
    let run = check(
        "actions:\n  - title: missing\n    shell: pwd\n    workingDirectory: /nonexistent/dir\n",
    );
    assert_exit(&run, 0);
    let out = output(&run);
    assert!(
        out.contains(
            "warning: actions[0].workingDirectory: workingDirectory /nonexistent/dir \
                      is not a directory now"
        ),
        "{out}"
    );
    let server = crate::harness::Server::start(serde_json::json!({
        "actions": [{"id": "missing", "title": "Missing", "shell": "pwd",
                     "workingDirectory": "/nonexistent/dir"}],
    }));
    let entry = server.run("missing");
    let said = entry.to_string();
    assert!(
        said.contains(
            "failed to start: cannot enter the working directory /nonexistent/dir: No \
                       such file or directory"
        ),
        "{said}"
    );
    assert!(!said.contains("/bin/sh"), "{said}");
}

/// Programs that read a value as their own commands (fe30i F02, F03, F04, F08, F09): a sed
/// script, sqlite3's operands and input, git's settings and commands, `gdb -ex`, an
/// interpreter's input, `find -exec {}`; each refused at its path naming the place and the
/// fix, and the same programs given the value as data accepted.
#[test]
fn a_value_a_program_reads_as_its_own_commands_is_refused_naming_the_fix() {
    let yaml = "\
actions:
  - title: sed
    shell: sed -n {{ expr }} data.txt
    arguments: [{name: expr, type: ascii_sentence}]
  - title: sqlite3
    exec: [sqlite3, db.sqlite, '{{ q }}']
    arguments: [{name: q, type: ascii_sentence}]
  - title: sqlite3 input
    shell: echo {{ q }} | sqlite3 db.sqlite
    arguments: [{name: q, type: ascii_sentence}]
  - title: git config
    exec: [git, -C, /srv/repo, config, core.fsmonitor, '{{ v }}']
    arguments: [{name: v, type: ascii_sentence}]
  - title: git config-env
    exec: [git, -C, /srv/repo, '--config-env=core.fsmonitor=ACTIOND_ARG_V', status]
    arguments: [{name: v, type: ascii_sentence}]
  - title: rebase
    shell: git rebase -x {{ check }} HEAD~1
    arguments: [{name: check, type: ascii_sentence}]
  - title: gdb
    exec: [gdb, -batch, -nx, -ex, '{{ cmd }}']
    arguments: [{name: cmd, type: ascii_sentence}]
  - title: python
    shell: printf '%s\\n' {{ stmt }} | python3
    arguments: [{name: stmt, type: ascii_sentence}]
  - title: find
    shell: find /usr/bin -name {{ tool }} -exec {} --version \\;
    arguments: [{name: tool, type: ascii_identifier}]
  - title: safe
    shell: |
      sed -n {{ n }}p data.txt
      grep -F -e {{ text }} data.txt
      git config user.name {{ text }}
      echo {{ text }} | python3 /opt/read.py
      echo {{ text }} | mosquitto_pub -t t -l
      find /usr/bin -name {{ text }} -exec ls -l {} \\;
    arguments: [{name: n, type: int}, {name: text, type: ascii_identifier}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the script of `sed`"),
            ("actions[0].shell", "`type: int` line number"),
            ("actions[1].exec", "the commands of `sqlite3`"),
            (
                "actions[2].shell",
                "the standard input of a program not known",
            ),
            ("actions[3].exec", "a git setting"),
            ("actions[4].exec", "$ACTIOND_ARG_V holds argument \"v\""),
            ("actions[5].shell", "a command git runs"),
            ("actions[6].exec", "a debugger's command"),
            (
                "actions[7].shell",
                "the standard input of a program not known",
            ),
            (
                "actions[8].shell",
                "a test of `find` whose matches `-exec {}` runs",
            ),
        ],
        &["actions[9]"],
    );
}

/// A plain assignment to a name the shell may have from its environment keeps it exported
/// (fe30i F06): `PATH={{ dir }}:…; mytool` and `HOME=/srv/{{ p }}; git status` are refused
/// like `HOME=… git`, and so is any assignment after `set -a`; a lower-case name stays a
/// variable of the command's own.
#[test]
fn a_value_assigned_to_an_inherited_or_allexported_variable_is_refused_at_load() {
    let yaml = "\
actions:
  - title: path
    shell: 'PATH={{ dir }}:/usr/bin:/bin; mytool'
    arguments: [{name: dir, type: ascii_identifier}]
  - title: home
    shell: 'HOME=/srv/apps/{{ p }}; git status'
    arguments: [{name: p, type: ascii_identifier}]
  - title: allexport
    shell: 'set -a; d={{ p }}; ls -- \"$d\"'
    arguments: [{name: p, type: ascii_identifier}]
  - title: own
    shell: 'd=/srv/apps/{{ p }}; ls -- \"$d\"'
    arguments: [{name: p, type: ascii_identifier}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0]", "`PATH`"),
            ("actions[1]", "`HOME`"),
            ("actions[2]", "`d`"),
        ],
        &["actions[3]"],
    );
}

/// A form only bash reads in a `shell:` (fe30i F13), which /bin/sh runs: dash stops at it
/// with a syntax error at every press. A warning naming the form and the fix, since /bin/sh
/// is bash on some systems.
#[test]
fn a_bash_only_form_in_a_shell_command_is_a_warning() {
    let run = check(
        "actions:\n  - title: here\n    shell: 'wc -c <<< \"$ACTIOND_ARG_V\"'\n    \
         arguments: [{name: v, type: ascii_sentence}]\n  - title: plain\n    \
         shell: 'printf \"%s\\n\" \"$ACTIOND_ARG_V\" | wc -c'\n    \
         arguments: [{name: v, type: ascii_sentence}]\n",
    );
    let out = output(&run);
    assert_exit(&run, 0);
    assert!(
        out.contains("warning: actions[0].shell: the here-string `<<<` on line 1 is bash's"),
        "{out}"
    );
    assert!(!out.contains("actions[1]"), "{out}");
}

/// A value among the arguments of a program actiond does not know may be the program a
/// wrapper runs (`chrt -i 0 {{ job }}`, `runuser -u nobody -- {{ job }}`, a script): refused
/// at load naming the program and the three fixes; a program it knows, a type that cannot
/// name a program, the author's choices and `allowUnknownProgram` load.
#[test]
fn a_value_a_wrapper_actiond_does_not_know_may_run_is_refused_at_load() {
    let yaml = "\
actions:
  - id: idlejob
    shell: chrt -i 0 {{ job }} {{ file }}
    arguments: [{name: job, type: ascii_identifier, default: backup}, {name: file, type: ascii_identifier, default: today}]
  - id: asuser
    exec: [runuser, -u, nobody, --, '{{ job }}']
    arguments: [{name: job, type: ascii_identifier, default: backup}]
  - id: script
    shell: taskset 1 \"$JOB\"
    arguments: [{name: job, type: ascii_sentence}]
  - id: container
    shell: docker exec web {{ job }}
    arguments: [{name: job, type: ascii_identifier}]
  - id: known
    shell: ping -c 1 {{ host }} && curl -fsS http://{{ host }}/ && docker restart {{ host }}
    arguments: [{name: host, type: ascii_identifier}]
  - id: narrow
    shell: /usr/local/bin/report {{ n }} {{ when }} {{ to }} {{ url }} {{ on }} {{ pick }}
    arguments:
      - {name: n, type: int}
      - {name: when, type: datetime}
      - {name: to, type: email}
      - {name: url, type: url}
      - {name: on, type: checkbox}
      - {name: pick, choices: [{value: daily}, {value: weekly}]}
  - id: said
    shell: /usr/local/bin/report {{ job }}
    arguments: [{name: job, type: ascii_identifier, allowUnknownProgram: true}]
  - id: written
    shell: chrt -i 0 /usr/local/bin/backup {{ file }}
    arguments: [{name: file, type: ascii_identifier}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a program actiond does not know `chrt`"),
            ("actions[0].shell", "allowUnknownProgram: true"),
            ("actions[0].shell", "write the program out"),
            // `runuser USER ARGS` starts USER's shell with ARGS: read as its script.
            ("actions[1].exec", "{{ job }} reaches it"),
            (
                "actions[2].shell",
                "a program actiond does not know `taskset`",
            ),
            (
                "actions[3].shell",
                "a program actiond does not know `docker`",
            ),
        ],
        &["actions[4]", "actions[5]", "actions[6]"],
    );
}

/// The audited forms of the programs actiond trusts (`template::audit`): a value as the file
/// curl uploads or reads its options from, the unit a `systemctl` verb acts on, the
/// environment `systemctl set-environment` gives every service, tar's archive (`HOST:FILE`
/// runs a remote shell), a whole `ssh -o` setting, `mpc`'s command, and `ffmpeg`, which is
/// trusted no more. Each is refused at load naming the place; the safe forms load (the
/// author's choices, a value inside a name the author wrote, a number, a `url`).
#[test]
fn a_value_in_an_audited_form_of_a_trusted_program_is_refused_at_load() {
    let yaml = "\
actions:
  - title: upload
    shell: curl -fsS -T {{ file }} https://nas.local/upload/
    arguments: [{name: file, type: ascii_sentence}]
  - title: profile
    exec: [curl, -sK, '{{ profile }}', 'https://nas.local/']
    arguments: [{name: profile, type: ascii_identifier}]
  - title: restart
    shell: sudo systemctl restart {{ service }}
    arguments: [{name: service, type: ascii_identifier}]
  - title: mode
    shell: systemctl set-environment APP_MODE={{ mode }}
    arguments: [{name: mode, type: ascii_identifier}]
  - title: archive
    shell: tar -czf {{ archive }} /srv/data
    arguments: [{name: archive, type: ascii_sentence}]
  - title: ssh option
    shell: ssh -o {{ opt }} pi@backup uptime
    arguments: [{name: opt, type: ascii_sentence}]
  - title: mpc
    shell: mpc {{ cmd }}
    arguments: [{name: cmd, type: ascii_identifier}]
  - title: ffmpeg
    shell: ffmpeg -i {{ src }} /tmp/out.mp4
    arguments: [{name: src, type: ascii_sentence}]
  - title: restart chosen
    shell: sudo systemctl restart {{ service }}
    arguments: [{name: service, choices: [{value: kodi}, {value: mosquitto}]}]
  - title: upload written
    shell: curl -fsS -T /srv/reports/today.pdf https://nas.local/upload/{{ name }}
    arguments: [{name: name, type: ascii_identifier}]
  - title: instance
    shell: systemctl restart app@{{ inst }}.service
    arguments: [{name: inst, type: ascii_identifier}]
  - title: archive named
    shell: tar -czf /backup/{{ name }}.tgz /srv/data
    arguments: [{name: name, type: ascii_identifier}]
  - title: volume
    shell: mpc volume {{ n }}
    arguments: [{name: n, type: int}]
  - title: ffmpeg url
    shell: ffmpeg -i {{ src }} /tmp/out.mp4
    arguments: [{name: src, type: url}]
  - title: ssh timeout
    shell: ssh -o ConnectTimeout={{ n }} pi@backup uptime
    arguments: [{name: n, type: int}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a file curl sends"),
            ("actions[0].shell", "write the file's name out"),
            ("actions[1].exec", "`curl -K`"),
            ("actions[2].shell", "the unit a `systemctl` verb acts on"),
            ("actions[2].shell", "debug-shell.service"),
            ("actions[3].shell", "`systemctl set-environment`"),
            ("actions[4].shell", "`tar -f`"),
            ("actions[5].shell", "`ssh -o`"),
            ("actions[6].shell", "the command of `mpc`"),
            (
                "actions[7].shell",
                "a program actiond does not know `ffmpeg`",
            ),
            // A url too: ffmpeg follows a playlist's `file:` entries, and no program
            // actiond does not know takes a url as data on its word alone.
            (
                "actions[13].shell",
                "a program actiond does not know `ffmpeg`",
            ),
        ],
        &[
            "actions[8]",
            "actions[9]",
            "actions[10]",
            "actions[11]",
            "actions[12]",
            "actions[14]",
        ],
    );
}

/// A value inside an interpreter's program text (`python3 -c`, `perl -e`, `node -e`, `php
/// -r`) is code, whatever its type (a `url` may hold `'` and `(`): refused at load with the
/// safe forms; the value as an argument after the text loads.
#[test]
fn a_value_in_an_interpreters_program_text_is_refused_at_load() {
    let yaml = "\
actions:
  - title: python
    shell: python3 -c \"print('{{ u }}')\"
    arguments: [{name: u, type: url}]
  - title: perl
    exec: [perl, -e, \"print '{{ u }}'\"]
    arguments: [{name: u, type: url}]
  - title: node
    exec: [node, -e, 'console.log(\"{{ u }}\")']
    arguments: [{name: u, type: url}]
  - title: safe
    shell: python3 -c 'import sys; print(sys.argv[1])' {{ u }}
    arguments: [{name: u, type: url}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the program text an interpreter runs"),
            ("actions[0].shell", "sys.argv[1]"),
            ("actions[1].exec", "the program text an interpreter runs"),
            ("actions[2].exec", "the program text an interpreter runs"),
        ],
        &["actions[3]"],
    );
}

/// The same class, wider: a file written by a here-document that expands a value (the body
/// read after the line, so also a command later on that line), and a written file given to
/// a program not known to read it as data only (`python3 FILE`, `awk -f`, `curl -K`, or on
/// its input: `python3 < FILE`, `curl -K -`). A file handled as data (`cat`, `cp`, `grep`,
/// `rm`) and a here-document that expands nothing load.
#[test]
fn a_value_written_by_a_here_document_or_given_to_a_code_reader_is_refused_at_load() {
    let yaml = "\
actions:
  - title: heredoc
    shell: |
      cat > job.sh <<EOF
      echo $NAME
      EOF
      sh job.sh
    arguments: [{name: name, type: ascii_sentence}]
  - title: heredoc same line
    shell: |
      tee job.sh > /dev/null <<EOF; sh job.sh
      echo $NAME
      EOF
    arguments: [{name: name, type: ascii_sentence}]
  - title: python
    shell: printf '%s\\n' \"$NAME\" > prog.txt; python3 prog.txt
    arguments: [{name: name, type: ascii_sentence}]
  - title: awk
    shell: printf '%s\\n' \"$NAME\" > a.awk; awk -f a.awk /etc/hosts
    arguments: [{name: name, type: ascii_sentence}]
  - title: stdin
    shell: printf '%s\\n' \"$NAME\" > prog.txt; python3 < prog.txt
    arguments: [{name: name, type: ascii_sentence}]
  - title: curl config
    shell: printf '%s\\n' \"$NAME\" | curl -K - https://example.com
    arguments: [{name: name, type: ascii_sentence}]
  - title: data
    shell: printf '%s\\n' \"$NAME\" > out.txt; cat out.txt; cp out.txt /srv/o.txt; grep -c x out.txt; rm -f out.txt
    arguments: [{name: name, type: ascii_sentence}]
  - title: static
    shell: |
      cat > job.sh <<EOF
      echo hello
      EOF
      sh job.sh \"$NAME\"
    arguments: [{name: name, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `job.sh`, which line 1 writes"),
            ("actions[1].shell", "the file `job.sh`"),
            (
                "actions[2].shell",
                "the file `prog.txt`, which line 1 writes a value into and a program this \
                 command runs is given, which may read it as code",
            ),
            ("actions[3].shell", "the file `a.awk`"),
            ("actions[4].shell", "the standard input of"),
            ("actions[5].shell", "the standard input of"),
        ],
        &["actions[6]", "actions[7]"],
    );
}

/// The eleventh attack's (fe30k) configs, each accepted before: a global option of `docker`
/// that hid `exec` (F2), an interpreter or `docker` named by a path outside the system's
/// directories (F5), `sshpass` in front of `ssh` (F9), the processes `kill` and `pkill` pick
/// (F3: `-1` and `.` are every one, `int` or not), a copy of a written file run (F6),
/// sqlite3's `.read FILE` and `sh -s < FILE` of a written file (F1), an inherited variable
/// set by `for`, `read` or `printf -v`, `jq`'s filter (`env` prints the environment) and a
/// branch's remote in git's settings (a URL `git pull` fetches from), and `psql` behind
/// `docker exec -i` reading a value on its input (`\\!` runs commands). Each refused at its path; the forms next to them
/// load: the author's script behind the venv's interpreter, `docker logs`, a script of one's
/// own, `pkill` of a choice, a `for` over the author's words.
#[test]
fn the_eleventh_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: docker context
    shell: docker --context nas exec web {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: venv module
    shell: /opt/app/venv/bin/python -m {{ module }}
    arguments: [{name: module, type: ascii_identifier}]
  - title: local docker
    exec: [/usr/local/bin/docker, exec, web, '{{ task }}']
    arguments: [{name: task, type: ascii_identifier}]
  - title: sshpass
    shell: sshpass -f /etc/nas.pw ssh admin@nas /usr/local/bin/mail-report {{ to }}
    arguments: [{name: to, type: email}]
  - title: kill
    shell: kill -9 {{ pid }}
    arguments: [{name: pid, type: int}]
  - title: pkill
    shell: pkill {{ name }}
    arguments: [{name: name, type: ascii_identifier}]
  - title: copy run
    shell: |
      printf '%s\\n' \"$V\" > /tmp/j.sh
      cp /tmp/j.sh /tmp/run.sh
      sh /tmp/run.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: sqlite read
    shell: printf '%s\\n' \"$V\" > /tmp/q.sql; sqlite3 /srv/n.db \".read /tmp/q.sql\"
    arguments: [{name: v, type: url}]
  - title: sh stdin
    shell: printf '%s\\n' \"$V\" > /tmp/job; sh -s < /tmp/job
    arguments: [{name: v, type: url}]
  - title: for TZ
    shell: for TZ in \"$V\"; do date; done
    arguments: [{name: v, type: ascii_identifier}]
  - title: jq filter
    shell: jq -r \"$V\" /srv/data.json
    arguments: [{name: v, type: ascii_identifier}]
  - title: git remote
    shell: git -C /srv/app config branch.main.remote {{ r }} && git -C /srv/app pull
    arguments: [{name: r, type: url}]
  - title: psql in a container
    shell: printf '%s\\n' \"$V\" | docker exec -i db psql -U app
    arguments: [{name: v, type: ascii_sentence}]
  - title: venv script
    shell: /opt/app/venv/bin/python /opt/app/manage.py {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: docker logs
    shell: /usr/local/bin/docker logs --tail 50 {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: own script
    shell: /usr/local/bin/backup.sh {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: pkill choice
    shell: pkill -x {{ name }}
    arguments: [{name: name, choices: [{value: kodi}, {value: firefox}]}]
  - title: for words
    shell: for HOST in a b; do ping -c1 \"$HOST\"; done; echo \"$V\"
    arguments: [{name: v, type: ascii_identifier}]
  - title: jq arg
    shell: jq -r --arg v \"$V\" '.[$v]' /srv/data.json
    arguments: [{name: v, type: ascii_identifier}]
";
    let unknown = "a program actiond does not know";
    let signalled = "the processes `kill`, `pkill`, `pgrep` or `killall` picks";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", unknown),
            ("actions[1].shell", unknown),
            ("actions[2].exec", unknown),
            (
                "actions[3].shell",
                "the command `ssh` runs on the other host",
            ),
            ("actions[4].shell", signalled),
            ("actions[5].shell", signalled),
            ("actions[6].shell", "the file `/tmp/"),
            ("actions[7].shell", "the file `/tmp/q.sql`"),
            (
                "actions[8].shell",
                "the script a shell reads from its standard input",
            ),
            ("actions[9].shell", "the environment variable `TZ`"),
            ("actions[10].shell", "the filter of `jq`"),
            ("actions[11].shell", "a git setting"),
            (
                "actions[12].shell",
                "the standard input of a program not known",
            ),
        ],
        &[
            "actions[13]",
            "actions[14]",
            "actions[15]",
            "actions[16]",
            "actions[17]",
            "actions[18]",
        ],
    );
}

/// The twelfth attack's (fe30m) configs, each accepted before: a written file run by another
/// name (after `cd`, with `./` or `//` in its path), written by `dd of=` or through `cat >`
/// (F1-F4); `sed` behind `find -exec` and behind a wrapper the model has no entry for
/// (`taskset`, `runuser -u`), an interpreter's `-c` there (F6-F8), and a value as the
/// program behind `find -exec nice`; `git remote set-url` (F9); a copy of `${V#*.}` that
/// starts an argument (F10); `readonly` of an inherited name (F11); `sudo -s` reading a
/// value on its input (F12); `tar -T -` (F14); the items of `xargs -0` for `sed` and `kill`
/// (F15); `exec: [env, NAME=…]` (F16); a block's redirection (F18); `psql -c` (F19). The
/// forms next to them load.
#[test]
fn the_twelfth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: cd then path
    shell: cd /srv/jobs && printf '%s\\n' \"$V\" > job.sh; sh /srv/jobs/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: dot slash
    shell: printf '%s\\n' \"$V\" > /srv/jobs/job.sh; sh /srv/jobs/./job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: dd
    shell: printf '%s\\n' \"$V\" | dd of=/srv/jobs/job.sh status=none; sh /srv/jobs/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: cat copy
    shell: printf '%s\\n' \"$V\" > /tmp/job.in; cat /tmp/job.in > /tmp/job.sh; sh /tmp/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: find sed
    shell: find /srv/conf -name '*.conf' -exec sed -i \"s#^u=.*#u={{ v }}#\" {} +
    arguments: [{name: v, type: url}]
  - title: taskset sed
    shell: taskset -c 0 sed -i \"s#^u=.*#u={{ v }}#\" /srv/app.conf
    arguments: [{name: v, type: url}]
  - title: chrt python
    exec: [chrt, -i, '0', python3, -c, 'print(\"{{ v }}\")']
    arguments: [{name: v, type: url}]
  - title: find nice
    shell: find /srv -maxdepth 0 -exec nice -n 19 {{ v }} \\;
    arguments: [{name: v, type: ascii_sentence}]
  - title: remote set-url
    shell: git -C /srv/app remote set-url origin {{ v }}
    arguments: [{name: v, type: url}]
  - title: stripped copy
    shell: host=${V#*.}; ssh -o BatchMode=yes \"$host\" uptime
    arguments: [{name: v, type: ascii_sentence}]
  - title: readonly
    shell: readonly https_proxy=\"$V\"; curl -s https://example.org/
    arguments: [{name: v, type: url}]
  - title: sudo shell
    shell: |
      sudo -u nobody -s <<EOF
      curl -fsS -O \"$V\"
      EOF
    arguments: [{name: v, type: url}]
  - title: tar list
    shell: printf '%s\\n' \"$V\" | tar czf /srv/b.tgz -T -
    arguments: [{name: v, type: ascii_sentence}]
  - title: xargs sed
    shell: printf '%s\\0' \"$V\" | xargs -0 -I{} sed -i 's#^u=.*#u={}#' /srv/app.conf
    arguments: [{name: v, type: url}]
  - title: xargs kill
    shell: printf '%s\\0' \"$V\" | xargs -0 kill -TERM
    arguments: [{name: v, type: int}]
  - title: exec env
    exec: [env, 'GIT_SSH_COMMAND={{ v }}', git, -C, /srv/app, pull]
    arguments: [{name: v, type: ascii_sentence}]
  - title: block
    shell: |
      { echo '#!/bin/sh'; printf '%s\\n' \"$V\"; } > /tmp/s.sh
      sh /tmp/s.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: psql
    shell: psql -d app -c \"UPDATE config SET hook='{{ v }}'\"
    arguments: [{name: v, type: url}]
  - title: find rm
    shell: find /srv/cache -name \"{{ v }}\" -exec rm -f {} +
    arguments: [{name: v, type: ascii_identifier}]
  - title: xargs rm
    shell: printf '%s\\0' \"$V\" | xargs -0 rm -f --
    arguments: [{name: v, type: ascii_sentence}]
  - title: written elsewhere
    shell: printf '%s\\n' \"$V\" > /tmp/note.txt; sh /srv/jobs/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: stripped after dashes
    shell: host=${V#*.}; ssh -o BatchMode=yes -- \"$host\" uptime
    arguments: [{name: v, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `job.sh`"),
            ("actions[1].shell", "the file `/srv/jobs/job.sh`"),
            ("actions[2].shell", "the file `/srv/jobs/job.sh`"),
            ("actions[3].shell", "the file `/tmp/job.sh`"),
            ("actions[4].shell", "the script of `sed`"),
            ("actions[5].shell", "the script of `sed`"),
            ("actions[6].exec", "the program text an interpreter runs"),
            ("actions[7].shell", "the program the command runs"),
            ("actions[8].shell", "a git setting"),
            ("actions[9].shell", "$host holds a part of a value"),
            (
                "actions[10].shell",
                "the environment variable `https_proxy`",
            ),
            ("actions[11].shell", "the shell of `sudo -s`"),
            (
                "actions[12].shell",
                "the standard input of a program not known",
            ),
            ("actions[13].shell", "the items `xargs -0` reads"),
            ("actions[14].shell", "the items `xargs -0` reads"),
            (
                "actions[15].exec",
                "the environment variable `GIT_SSH_COMMAND`",
            ),
            ("actions[16].shell", "the file `/tmp/s.sh`"),
            ("actions[17].shell", "the SQL of `psql -c`"),
        ],
        &["actions[18]", "actions[19]", "actions[20]", "actions[21]"],
    );
}

/// The thirteenth attack's (fe30n) configs: a `url` in a variable `make` sets from its
/// command line (it pastes the value into a recipe's shell), and a value written into a file
/// something else runs by convention (a login shell's `/etc/profile.d`, cron's `/etc/cron.d`),
/// a value that may start with `@` as curl's data (`@/etc/shadow` posts that file), and a
/// dropped file's name in `-F name=@…` (`a.pdf,config.yaml` sends both). Data files,
/// `--data-raw`, a type that cannot start with `@` and the file on curl's input load.
#[test]
fn the_thirteenth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: make
    shell: make -C /srv/site deploy URL={{ url }}
    arguments: [{name: url, type: url}]
  - title: make exec
    exec: [make, -C, /srv/site, deploy, 'URL={{ url }}']
    arguments: [{name: url, type: url}]
  - title: profile
    shell: echo \"export http_proxy={{ url }}\" > /etc/profile.d/proxy.sh
    arguments: [{name: url, type: url}]
  - title: cron
    shell: echo \"*/5 * * * * root curl -fsS {{ url }}\" > /etc/cron.d/health
    arguments: [{name: url, type: url}]
  - title: data
    shell: echo \"{{ url }}\" > /var/lib/app/url.txt
    arguments: [{name: url, type: url}]
  - title: curl data
    shell: curl -fsS -d \"$MESSAGE\" http://127.0.0.1:9/notes
    arguments: [{name: message, type: raw_string_multiline}]
  - title: curl data exec
    exec: [curl, -fsS, --data-binary, '{{ message }}', 'http://127.0.0.1:9/notes']
    arguments: [{name: message, type: raw_string_multiline}]
  - title: curl raw
    shell: curl -fsS --data-raw \"$MESSAGE\" http://127.0.0.1:9/notes
    arguments: [{name: message, type: raw_string_multiline}]
  - title: curl text
    shell: curl -fsS -d \"$MESSAGE\" http://127.0.0.1:9/notes
    arguments: [{name: message, type: ascii_sentence}]
  - title: curl form file
    shell: curl -fsS -F \"document=@{{ filepath }}\" http://127.0.0.1:9/post
    execOnFileCreatedInDir: /srv/inbox
  - title: curl form input
    shell: curl -fsS -F 'document=@-;filename=scan.pdf' http://127.0.0.1:9/post < {{ filepath }}
    execOnFileCreatedInDir: /srv/inbox
";
    let by_convention = "run as code by convention";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a variable `make` sets"),
            ("actions[1].exec", "a variable `make` sets"),
            ("actions[2].shell", by_convention),
            ("actions[3].shell", by_convention),
            ("actions[5].shell", "the data of `curl -d`"),
            ("actions[6].exec", "the data of `curl -d`"),
            ("actions[9].shell", "the file name of a form field"),
        ],
        &["actions[4]", "actions[7]", "actions[8]", "actions[10]"],
    );
}

/// A value written into a file that the command then runs or splits (fe30i F01, F14): refused
/// at load naming the file and the line that wrote it; a value written to one file and another
/// file run loads.
#[test]
fn a_value_written_into_a_file_the_command_runs_is_refused_at_load() {
    let yaml = "\
actions:
  - title: sh
    shell: printf '%s\\n' {{ x }} > job.sh && sh job.sh
    arguments: [{name: x, type: ascii_sentence}]
  - title: dot
    shell: echo {{ x }} > s.sh; . ./s.sh
    arguments: [{name: x, type: ascii_sentence}]
  - title: xargs
    shell: printf '%s\\n' {{ files }} > list; xargs -a list rm -f
    arguments: [{name: files, type: ascii_sentence}]
  - title: safe
    shell: printf '%s\\n' {{ x }} > out.txt; sh ./deploy.sh
    arguments: [{name: x, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            (
                "actions[0].shell",
                "the file `job.sh`, which line 1 writes a value into",
            ),
            ("actions[1].shell", "the file `s.sh`"),
            ("actions[2].shell", "the file `list`"),
        ],
        &["actions[3]"],
    );
}
