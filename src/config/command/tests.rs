//! The config check of `shell:` and `exec:` commands: placeholders, the variables of
//! arguments, and what the shell model refuses (split values, values read again).

use super::*;
use crate::config::fixtures::*;

#[test]
fn a_bare_name_a_command_reads_is_a_shell_variable_of_its_own_never_exported() {
    let render = |text: &str| {
        let (c, _) = ok(text);
        match &c.actions[0].template {
            CommandTemplate::Shell(t) => t.render(&|_| Some("v".into())),
            CommandTemplate::Exec(_) => unreachable!(),
        }
    };
    assert_eq!(
        render(
            "actions:\n  - {title: x, shell: 'grep -i \"$GREP\" log', arguments: [{name: grep}]}\n"
        ),
        "unset GREP; GREP=$ACTIOND_ARG_GREP; grep -i \"$GREP\" log"
    );
    assert_eq!(
        render(
            "actions:\n  - {title: x, shell: 'echo ${#TAR_OPTIONS} $(( COUNT + 1 ))', arguments: [{name: tar_options}, {name: count, type: int}, {name: other}]}\n"
        ),
        "unset TAR_OPTIONS COUNT; TAR_OPTIONS=$ACTIOND_ARG_TAR_OPTIONS COUNT=$ACTIOND_ARG_COUNT; echo ${#TAR_OPTIONS} $(( COUNT + 1 ))"
    );
    // A placeholder alone, or a longer name, defines nothing.
    assert_eq!(
        render(
            "actions:\n  - {title: x, shell: 'echo {{ pin }} $PINS', arguments: [{name: pin}]}\n"
        ),
        "echo 'v' $PINS"
    );
}

#[test]
fn an_unquoted_variable_of_an_argument_is_refused_where_its_value_may_split() {
    let action = |shell: &str, arg: &str| {
        format!("actions:\n  - {{title: x, shell: '{shell}', arguments: [{arg}]}}\n")
    };
    let refused = "write \"$NAME\" (its values may hold spaces";
    for (shell, arg, needle) in [
        (
            "rm -f cache/$NAME",
            "{name: name, type: ascii_sentence}",
            refused,
        ),
        (
            "rm -f ${NAME}",
            "{name: name, type: very_dangerous_raw_string}",
            refused,
        ),
        (
            "rm -f $NAME",
            "{name: name, type: \"regex:[a-z ]+\"}",
            refused,
        ),
        (
            "rm -f $NAME",
            "{name: name, choices: [{value: a b}]}",
            refused,
        ),
        // Glob characters: `*@example.com` becomes every file of that shape.
        ("rm -f $NAME", "{name: name, type: email}", refused),
        ("curl $NAME", "{name: name, type: url}", refused),
        (
            "rm -f $NAME",
            "{name: name, choices: [{value: \"*\"}]}",
            refused,
        ),
        (
            "rm -f $ACTIOND_ARG_NAME",
            "{name: name, type: password}",
            "write \"$ACTIOND_ARG_NAME\"",
        ),
    ] {
        assert_error(&action(shell, arg), "actions[0].shell", needle);
    }
    // A copy of the value is split like the value (`old -r victim` gives rm `-r` in
    // dash, bash and busybox ash alike: tests/shells, `copies`).
    let sentence = "{name: name, type: ascii_sentence}";
    let copied = "(copied into it)";
    let unknown = "which actiond does not follow";
    let spaces = "(its values may hold spaces";
    for (shell, needles) in [
        ("x=$NAME; rm $x", [copied, "write \"$x\"", spaces]),
        ("x={{ name }}; rm $x", [copied, "line 1", spaces]),
        ("x=\"$NAME\"; rm $x", [copied, "\"name\"", spaces]),
        (
            "f() { local x=\"$NAME\"; rm $x; }; f",
            [copied, "$x", spaces],
        ),
        ("set -- \"$NAME\"; rm $1", ["$1", "write \"$1\"", spaces]),
        ("set -- {{ name }}; rm $@", [copied, "write \"$@\"", spaces]),
        ("for x in \"$NAME\"; do rm $x; done", [copied, "$x", spaces]),
        ("x=${NAME%.txt}; rm $x", [copied, "$x", spaces]),
        ("x=${y:-$NAME}; rm $x", [copied, "$x", spaces]),
        ("y=$ACTIOND_ARG_NAME; x=$y; rm $x", [copied, "$x", spaces]),
        (
            "read x <<E\n\n$NAME\n\nE\n\nrm $x",
            ["what `read` reads", unknown, spaces],
        ),
        (
            "echo \"$NAME\" | { read x; rm $x; }",
            ["`read`", unknown, spaces],
        ),
        (
            "x=$(echo \"$NAME\"); rm $x",
            ["the output of `$( )`", unknown, spaces],
        ),
        (
            "f() { rm $1; }; f x",
            ["a function is called with", unknown, spaces],
        ),
        (
            "x=NAME; rm ${!x}",
            ["named by the value of $x", unknown, spaces],
        ),
        ("rm \"$NAME\" $REPLY", ["$REPLY", unknown, spaces]),
        // An inner shell's positional parameters are the words after its script.
        (
            "sh -c ''rm -f cache/$1'' sh {{ name }}",
            ["$1", "write \"$1\"", spaces],
        ),
        (
            "bash -c ''for f; do rm $f; done'' sh \"$NAME\"",
            [copied, "$f", spaces],
        ),
        (
            "sh -c ''rm $@'' sh x \"$ACTIOND_ARG_NAME\"",
            ["$@", "write \"$@\"", spaces],
        ),
        (
            "sh -c ''rm -f $0'' \"$NAME\"",
            ["$0", "write \"$0\"", spaces],
        ),
        // The output of a command substitution that reads the value.
        (
            "rm -f $(printf %s \"$NAME\")",
            ["the output of `$( )` on line 1", "(it reads $NAME)", spaces],
        ),
        (
            "rm -f `basename \"$NAME\"`",
            ["backtick command", "put it in double quotes", spaces],
        ),
        // The value of `${x:-WORD}`, and a copy made by `${x:=WORD}`.
        (
            "rm -f ${DIR:-$NAME}",
            ["$NAME on line 1", "write \"$NAME\"", spaces],
        ),
        (": \"${f:=$NAME}\"; rm -f $f", [copied, "$f", spaces]),
        // A name joined across a line continuation.
        (
            "rm -f $ACTIOND_ARG_\\\n\nNAME",
            ["$ACTIOND_ARG_NAME", "line 1", spaces],
        ),
        // `read -s` and `mapfile -t` take no word: the name after them is written.
        (
            "read -rs x <<E\n\n$NAME\n\nE\n\nrm $x",
            ["what `read` reads", unknown, spaces],
        ),
        (
            "mapfile -t a <<< \"$NAME\"; rm ${a[@]}",
            ["what `mapfile` reads", unknown, spaces],
        ),
        (
            "pushd \"/tmp/$NAME\"; rm ${DIRSTACK[0]}",
            ["$DIRSTACK, which the shell fills", unknown, spaces],
        ),
    ] {
        for needle in needles {
            assert_error(&action(shell, sentence), "actions[0].shell", needle);
        }
    }
    // The command sets IFS: any value may split, whatever its type.
    let ifs = "(the command sets IFS, so any character of a value may split it";
    for (shell, arg) in [
        ("IFS=.; rm $NAME", "{name: name, type: ascii_identifier}"),
        (
            "export IFS=.; rm $NAME",
            "{name: name, type: ascii_identifier}",
        ),
        (
            "f() { local IFS=.; rm $NAME; }; f",
            "{name: name, type: email}",
        ),
        ("IFS=1; sleep $N", "{name: n, type: int}"),
        (
            "IFS=.; x=$NAME; rm $x",
            "{name: name, type: ascii_identifier}",
        ),
        (
            "read IFS <<E\n\n.\n\nE\n\nrm $NAME",
            "{name: name, type: ascii_identifier}",
        ),
    ] {
        assert_error(&action(shell, arg), "actions[0].shell", ifs);
    }
    // No value of these holds a space: a warning with the same fix.
    for (shell, arg) in [
        ("rm -f cache/$NAME", "{name: name, type: ascii_identifier}"),
        ("rm -f $NAME", "{name: name, type: datetime}"),
        (
            "rm -f $NAME",
            "{name: name, type: ascii_sentence, choices: [{value: a}]}",
        ),
    ] {
        assert_warning(
            &action(shell, arg),
            "actions[0].shell",
            "stands outside quotes and holds argument \"name\"'s value: the shell splits it",
        );
    }
    // Ordinary commands that quote their variables load with no warning at all.
    for shell in [
        "rm -f \"cache/$NAME\"",
        "x=$NAME; rm -f \"$x\"",
        "rm -f {{ name }} $NAMES",
        "x=\"$NAME\"; rm -- \"$x\"",
        "x={{ name }}; cp \"$x\" \"/tmp/$x.txt\"",
        "set -- \"$NAME\"; rm -- \"$1\" \"$@\"",
        "for x in \"$NAME\"; do rm -- \"$x\"; done",
        "read -r x <<E\n\n$NAME\n\nE\n\nrm -- \"$x\"",
        "echo \"$NAME\" | while read -r l; do echo \"$l\"; done",
        "d=/var/tmp; n=3; rm -f $d/x$n \"$NAME\"",
        "for f in a b; do echo $f \"$NAME\"; done",
        "x=$((1 + 2)); echo $x \"$NAME\"",
        "IFS=.; set -- $(date +%F); echo \"$NAME\"",
        "now=$(date +%s); echo \"$now\" \"$NAME\"",
        "sh -c ''rm -f -- \"cache/$1\"'' sh {{ name }}",
        "sh -c ''echo $1'' sh literal; echo \"$NAME\"",
        // A command substitution that reads no value, and a copy of one.
        "tar cf b-$(date +%F).tar \"$NAME\"",
        "d=$(date +%F); rm -f $d.log `hostname`.pid \"$NAME\"",
        // Quoted, after `--`: what its command prints may start with `-`.
        "rm -f -- \"$(printf %s \"$NAME\")\"",
    ] {
        let (_, warnings) = ok(&action(shell, "{name: name, type: ascii_sentence}"));
        assert!(warnings.is_empty(), "{shell}: {warnings:?}");
    }
}

#[test]
fn an_inner_shells_positional_parameter_given_a_value_is_refused_unquoted_in_exec() {
    let action = |argv: &str| {
        format!(
            "actions:\n  - {{title: x, exec: [{argv}], \
             arguments: [{{name: name, type: ascii_sentence}}]}}\n"
        )
    };
    assert_error(
        &action("sh, -c, 'rm -f cache/$1', sh, '{{ name }}'"),
        "actions[0].exec",
        "write \"$1\"",
    );
    assert_error(
        &action("sh, -c, 'rm -f $0', '{{ name }}'"),
        "actions[0].exec",
        "write \"$0\"",
    );
    let (_, warnings) = ok(&action("sh, -c, 'rm -f -- \"cache/$1\"', sh, '{{ name }}'"));
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn an_expansion_that_strips_the_start_of_a_value_may_not_start_an_argument() {
    let action = |shell: &str, arg: &str| {
        format!("actions:\n  - {{title: x, shell: '{shell}', arguments: [{arg}]}}\n")
    };
    // `backup.-rf`, `x-rf`, `_rf` are `ascii_identifier` values; the expansions make
    // `-rf` of them in dash, bash and busybox ash (`//` and `:1`: bash and ash).
    let id = "{name: name, type: ascii_identifier}";
    for (shell, arg) in [
        ("rm \"${NAME#*.}\" x", id),
        ("rm ${NAME##*.}", id),
        ("rm \"${NAME//_/-}\"", id),
        ("rm \"${NAME:1}\"", id),
        ("x=\"$NAME\"; rm \"${x#?}\"", id),
        ("sh -c ''rm \"${1#x}\"'' sh {{ name }}", id),
        ("rm \"${NAME#*-}\"", "{name: name, type: datetime}"),
        // A command substitution that reads a value: its command may change the value into
        // one that starts with `-` (`tr _ -` of `_rf`).
        ("rm \"$(printf %s \"$NAME\" | tr _ -)\" x", id),
        ("rm `basename \"$NAME\"`", id),
        ("x=\"$NAME\"; rm \"$(echo \"$x\" | tr _ -)\"", id),
        ("sh -c ''rm \"$(echo \"$1\" | tr _ -)\"'' sh {{ name }}", id),
        // The same stored first (fe30i F11).
        ("y=$(printf %s \"$NAME\" | tr _ -); ls \"$y\"", id),
    ] {
        assert_error(
            &action(shell, arg),
            "actions[0].shell",
            "write `./` or `--` before it",
        );
    }
    for (shell, arg) in [
        ("rm -- \"${NAME#*.}\"", id),
        ("rm \"./${NAME#*.}\" \"x${NAME#*.}\" \"${NAME%.*}\"", id),
        ("x=\"${NAME#*.}\"", id),
        (
            "rm \"${NAME#*.}\"",
            "{name: name, type: ascii_identifier, allowLeadingDash: true}",
        ),
        ("rm \"${NAME#1}\"", "{name: name, type: int}"),
        ("rm -- \"$(printf %s \"$NAME\" | tr _ -)\"", id),
        (
            "rm ./\"$(printf %s \"$NAME\" | tr _ -)\" \"$(date +%F)\"",
            id,
        ),
        ("x=\"$(printf %s \"$NAME\" | tr _ -)\"", id),
        (
            "y=$(printf %s \"$NAME\" | tr _ -); ls -- \"$y\" ./\"$y\"",
            id,
        ),
        (
            "y=$NAME; ls \"$y\"; d=$(date +%F); ls \"$d\" \"$(cat /etc/hostname)\"",
            id,
        ),
        (
            "rm \"$(printf %s \"$NAME\" | tr _ -)\"",
            "{name: name, type: ascii_identifier, allowLeadingDash: true}",
        ),
        (
            "rm \"${NAME#*.}\"",
            "{name: name, choices: [{value: a.-b}]}",
        ),
    ] {
        ok(&action(shell, arg));
    }
}

#[test]
fn a_command_that_reads_a_name_no_argument_can_set_is_refused() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "actions:\n  - {title: x, shell: 'ls \"$PATH\"', arguments: [{name: path}]}\n",
            "actions[0].shell",
            "the command reads $PATH, which argument \"path\" cannot set because the shell reads that variable itself",
        ),
        (
            "actions:\n  - {title: x, shell: 'echo ${IFS}', arguments: [{name: ifs}]}\n",
            "actions[0].shell",
            "write \"$ACTIOND_ARG_IFS\" or {{ ifs }} instead",
        ),
        (
            "actions:\n  - {title: x, exec: [sh, -c, 'echo \"$HOST\"'], arguments: [{name: host}]}\n",
            "actions[0].exec",
            "an `exec:` command's environment holds argument \"host\" only as \"$ACTIOND_ARG_HOST\"",
        ),
    ];
    for (text, path, needle) in cases {
        assert_error(text, path, needle);
    }
    for text in [
        "actions:\n  - {title: x, shell: 'echo \"$ACTIOND_ARG_PATH\" {{ path }}', arguments: [{name: path}]}\n",
        "actions:\n  - {title: x, exec: [sh, -c, 'echo \"$ACTIOND_ARG_HOST\"'], arguments: [{name: host}]}\n",
    ] {
        ok(text);
    }
}

#[test]
fn a_value_bash_reads_again_must_be_an_int() {
    let a = |shell: &str, ty: &str| {
        format!("actions:\n  - {{title: x, shell: '{shell}', arguments: [{{name: n{ty}}}]}}\n")
    };
    let int = ", type: int";
    for shell in [
        "echo $(( N * 60 ))",
        "sleep $(( ACTIOND_ARG_N ))",
        "[[ $N -gt 3 ]] && echo big",
    ] {
        assert_error(&a(shell, ""), "actions[0].shell", "type: int");
        ok(&a(shell, int));
    }
    // Choices win over the type: an int whose choices are no integers is no int.
    assert_error(
        "actions:\n  - {title: x, shell: 'echo $(( N ))', arguments: [{name: n, type: int, choices: [{value: '1'}, {value: 'a[1]'}]}]}\n",
        "actions[0].shell",
        "type: int",
    );
    // A script handed to another shell, in `shell:` or in `exec:`.
    assert_error(
        &a("sh -c \"echo {{ n }}\"", ""),
        "actions[0].shell",
        "the script of `sh -c`",
    );
    assert_error(
        "actions:\n  - {title: x, exec: [bash, -c, 'echo {{ n }}'], arguments: [{name: n}]}\n",
        "actions[0].exec",
        "the script of `sh -c`",
    );
    ok(
        "actions:\n  - {title: x, exec: [bash, -c, 'echo \"$1\"', sh, '{{ n }}'], arguments: [{name: n}]}\n",
    );
    // A bare name inside single quotes reaches no other shell.
    assert_error(
        &a("sh -c ''echo $N''", ""),
        "actions[0].shell",
        "write \"$ACTIOND_ARG_N\" there",
    );
}

#[test]
fn an_argument_the_command_does_not_name_is_pointed_at_its_variable() {
    assert_warning(
        "actions:\n  - {title: x, shell: /opt/backup.sh, arguments: [{name: backup_target}]}\n",
        "actions[0].shell",
        "argument \"backup_target\" reaches the command as $ACTIOND_ARG_BACKUP_TARGET, not as $BACKUP_TARGET",
    );
    let (_, warnings) = ok(
        "actions:\n  - {title: x, shell: '/opt/backup.sh {{ backup_target }}', arguments: [{name: backup_target, allowUnknownProgram: true}]}\n",
    );
    assert!(
        !warnings
            .iter()
            .any(|w| w.message.contains("reaches the command")),
        "{warnings:?}"
    );
}

#[test]
fn placeholders_must_name_a_value_argument_in_a_safe_context() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "actions:\n  - {title: x, shell: 'echo {{ nope }}'}\n",
            "actions[0].shell",
            "names no argument",
        ),
        (
            "actions:\n  - {title: x, shell: 'echo {{ a }} {{ nope }}', arguments: [{name: a}]}\n",
            "actions[0].shell",
            "(declared: a)",
        ),
        (
            "actions:\n  - {title: x, shell: 'docker logs {{ Container }}', arguments: [{name: container}]}\n",
            "actions[0].shell",
            "{{ Container }} names no argument; did you mean {{ container }}? (argument names are case-sensitive)",
        ),
        (
            "actions:\n  - {title: x, exec: [echo, '{{ nope }}']}\n",
            "actions[0].exec[1]",
            "names no argument",
        ),
        (
            "actions:\n  - {title: x, shell: 'echo {{ ok }}', arguments: [{name: ok, type: confirmation}]}\n",
            "actions[0].shell",
            "confirmation argument",
        ),
        (
            "actions:\n  - {title: x, shell: 'echo {{ .CurrentEntity.name }}'}\n",
            "actions[0].shell",
            "no `entity:`",
        ),
        (
            "actions:\n  - {title: x, shell: 'echo $(echo {{ a }})', arguments: [{name: a}]}\n",
            "actions[0].shell",
            "inside $( )",
        ),
        (
            "actions:\n  - {title: x, shell: 'docker ps --format {{.Names}}'}\n",
            "actions[0].shell",
            "script file",
        ),
    ];
    for (text, path, needle) in cases {
        assert_error(text, path, needle);
    }
    let (config, _) = ok(
        "actions:\n  - {title: x, entity: server, shell: 'ping {{ server.host }} {{ n }}', \
                           arguments: [{name: n, type: int}]}\n",
    );
    let holes = config.actions[0].template.placeholders();
    assert_eq!(holes.len(), 2);
}

#[test]
fn exec_is_preferred_over_shell() {
    let text = "actions:\n  - title: Both\n    shell: echo a\n    exec: [echo, 5, '{{ x }}']\n    arguments: [{name: x}]\n";
    assert_warning(text, "actions[0].shell", "exec is used");
    assert_eq!(
        ok(text).0.actions[0].command,
        CommandSpec::Exec(vec!["echo".into(), "5".into(), "{{ x }}".into()])
    );
}

#[test]
fn a_file_trigger_lets_the_command_name_the_file() {
    let (c, _) = ok(
        "actions:\n  - {title: x, shell: 'mv -- {{ filepath }} /done/{{ filename }}.txt', execOnFileCreatedInDir: /in}\n",
    );
    assert_eq!(c.actions[0].arguments.len(), 5);
    // Without a file trigger the same placeholders name nothing.
    let problems = errors("actions:\n  - {title: x, shell: 'cat {{ filepath }}'}\n");
    assert!(
        problems[0].message.contains("names no argument"),
        "{problems:?}"
    );
}

#[test]
fn a_value_may_name_the_program_only_when_it_is_one_of_the_authors_choices() {
    let action = |command: &str, arg: &str| {
        format!("actions:\n  - {{title: x, {command}, arguments: [{arg}]}}\n")
    };
    let free = "{name: tool, type: ascii_identifier}";
    let chosen = "{name: tool, choices: [{value: df}, {value: free}]}";
    for (command, path) in [
        ("shell: '{{ tool }} -h'", "actions[0].shell"),
        ("shell: 'command \"$TOOL\" -h'", "actions[0].shell"),
        (
            "shell: 'nohup timeout 5 \"$ACTIOND_ARG_TOOL\"'",
            "actions[0].shell",
        ),
        ("exec: ['{{ tool }}', -h]", "actions[0].exec"),
        ("exec: [env, '{{ tool }}']", "actions[0].exec"),
    ] {
        assert_error(
            &action(command, free),
            path,
            "reaches it: the program the command runs (its name)",
        );
        ok(&action(command, chosen));
    }
    // A checklist's value is a combination of its choices, an entity's its file's.
    assert_error(
        &action(
            "shell: '{{ tool }} -h'",
            "{name: tool, type: checklist, choices: [{value: df}]}",
        ),
        "actions[0].shell",
        "the program the command runs",
    );
}

#[test]
fn a_value_reaching_a_shells_standard_input_or_xargs_is_refused() {
    let action = |shell: &str| {
        format!(
            "actions:\n  - {{title: x, shell: '{shell}', \
                 arguments: [{{name: name, type: ascii_identifier}}]}}\n"
        )
    };
    for (shell, needle) in [
        (
            "echo {{ name }} | sh",
            "the script a shell reads from its standard input",
        ),
        (
            "printf \"%s\\n\" \"$NAME\" | xargs rm -f",
            "splits into arguments at blanks and quotes",
        ),
        ("flock /run/l -c \"rm {{ name }}\"", "`flock -c`"),
        ("sg root \"rm -- $NAME\"", "the command of `sg`"),
        ("echo \"${NAME@P}\"", "prompt expansion"),
        ("m=ACTIOND_ARG_NAME; echo $(( m ))", "$m names a variable"),
    ] {
        assert_error(&action(shell), "actions[0].shell", needle);
    }
    for shell in [
        "sh -s -- \"$NAME\" <<''EOF''\n\nrm -f -- \"$1\"\n\nEOF",
        "printf \"%s\\0\" \"$NAME\" | xargs -0 rm -f --",
        "flock /run/l rm -f -- {{ name }}",
    ] {
        ok(&action(shell));
    }
}
