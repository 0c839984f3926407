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
    shell: 'printf %s \"$NAME\" > /tmp/n.txt; x=$(cat /tmp/n.txt); rm -- \"$x\" \"$(cat /tmp/n.txt)\"'
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
      echo \"$NAME\" | su pi -c 'cat > /tmp/x.txt'
      echo \"$NAME\" | ssh pi@host 'cat > /srv/notes/x.txt'
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
    shell: ping -c 1 {{ host }} && curl -fsS http://{{ host }}/ && docker logs --tail 5 {{ host }}
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
