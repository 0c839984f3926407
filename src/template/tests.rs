//! The template tables: contexts, refusals, and every divergence between the shell model
//! and a real shell that was found (most by `tests/shells/`, which runs the templates under
//! dash, bash, `bash --posix` and busybox ash); each stays here as a row.

use super::*;
use std::process::Command;

fn arg(n: &str) -> Placeholder {
    Placeholder::Argument(n.into())
}

fn contexts(text: &str) -> Vec<(Placeholder, Context)> {
    Template::shell(text)
        .unwrap()
        .placeholders()
        .map(|(p, c)| (p.clone(), c))
        .collect()
}

#[test]
fn placeholders_are_found_in_each_context() {
    use Context::*;
    let table: &[(&str, &[Context])] = &[
        ("echo {{ a }}", &[Unquoted]),
        ("echo {{a}}", &[Unquoted]),
        ("echo --x={{ a }}", &[Unquoted]),
        ("echo \"{{ a }}\"", &[DoubleQuoted]),
        ("echo \"x {{ a }} y\"", &[DoubleQuoted]),
        ("echo '{{ a }}'", &[SingleQuoted]),
        ("echo 'it''s {{ a }}'", &[SingleQuoted]),
        (
            "echo {{ a }} \"{{ a }}\" '{{ a }}'",
            &[Unquoted, DoubleQuoted, SingleQuoted],
        ),
        ("echo \"$HOME\" {{ a }}", &[Unquoted]),
        ("echo \"$(date)\" {{ a }}", &[Unquoted]),
        ("echo ${HOME} {{ a }}", &[Unquoted]),
        ("echo $((1+2)) {{ a }}", &[Unquoted]),
        ("echo `date` {{ a }}", &[Unquoted]),
        ("echo \\' {{ a }}", &[Unquoted]),
        ("echo \"\\\"\" {{ a }}", &[Unquoted]),
        ("echo a#b {{ a }}", &[Unquoted]),
        ("cat <<EOF\nbody\nEOF\necho {{ a }}", &[Unquoted]),
        ("cat <<-'EOF'\n\tbody $x\n\tEOF\necho {{ a }}", &[Unquoted]),
        ("cat <<< x; echo {{ a }}", &[Unquoted]),
        ("cat <<\"E F\"\nbody\nE F\necho {{ a }}", &[Unquoted]),
        ("cat <<E\\ F\nbody\nE F\necho {{ a }}", &[Unquoted]),
        ("# a comment\necho {{ a }}", &[Unquoted]),
        ("echo $(echo \"(\") {{ a }}", &[Unquoted]),
        ("echo {{a}}{{b}}", &[Unquoted, Unquoted]),
        // Regression: `)` closing `$( )` does not end the word, so this `#` is literal and
        // the quote after it is real.
        ("printf '%s' $(true)#'\n{{ a }}'", &[SingleQuoted]),
        ("echo `true`#'{{ a }}'", &[SingleQuoted]),
        ("echo ${x}#'{{ a }}'", &[SingleQuoted]),
        ("echo $(( 1 << 2 ))\necho \"\n2\n{{ a }}\"", &[DoubleQuoted]),
        ("echo \\\n{{ a }}", &[Unquoted]),
        ("(echo {{ a }})", &[Unquoted]),
        // The shells read `$( )` as shell code: the `)` of a case pattern does not close it,
        // a `#` right after `$(` starts a comment.
        (
            "echo \"$(case a in a) echo x;; esac)\" {{ a }}",
            &[Unquoted],
        ),
        (
            "x=$(case $1 in (a|b) echo 1;; *) echo 2;; esac); echo \"{{ a }}\"",
            &[DoubleQuoted],
        ),
        ("echo $(#\"\n)\")\" {{ a }} #\"", &[Unquoted]),
        ("echo $(#\"\n)\")\" \"{{ a }}\" #\"", &[DoubleQuoted]),
        ("x=$(cat <<EOF\n)\nEOF\n) printf %s {{ a }}", &[Unquoted]),
        // An unquoted here-document joins `x\⏎EOF` into one line before looking for EOF.
        ("cat <<EOF\nx\\\nEOF\ny\nEOF\necho {{ a }}", &[Unquoted]),
        (
            "cat <<EOF\nDate: $(date) `id`\nEOF\necho {{ a }}",
            &[Unquoted],
        ),
        (
            "case {{ a }} in x) echo '{{ a }}';; esac",
            &[Unquoted, SingleQuoted],
        ),
        (
            "[[ {{ a }} == x ]] && [[ -n \"{{ a }}\" ]]",
            &[Unquoted, DoubleQuoted],
        ),
        (
            "p ${x/a/b}{{ a }} ${x/a} {{ a }} \"${x//a}\" {{ a }}",
            &[Unquoted, Unquoted, Unquoted],
        ),
        ("[ {{ a }} -eq 1 ]", &[Unquoted]),
        ("export A={{ a }} B=\"{{ a }}\"", &[Unquoted, DoubleQuoted]),
        ("A={{ a }} cmd", &[Unquoted]),
        // A path is no builtin, whatever expansion it holds.
        (
            "\"$HOME\"/bin/tool {{ a }}; /opt/{{ a }}.sh {{ a }}",
            &[Unquoted, Unquoted, Unquoted],
        ),
        ("{{ a }}", &[Unquoted]),
        ("f() { printf %s {{ a }}; }; f", &[Unquoted]),
        ("if true; then echo {{ a }}; fi", &[Unquoted]),
        // A carriage return is part of a word, so this `#` starts no comment.
        ("echo a\r#'{{ a }}'", &[SingleQuoted]),
        ("echo x 2>/dev/null {{ a }}", &[Unquoted]),
        ("echo ${x:-a b} \"${x%%:*}\" {{ a }}", &[Unquoted]),
        (
            "echo \"${x}{{ a }}\" $x{{ a }} \"$1{{ a }}\"",
            &[DoubleQuoted, Unquoted, DoubleQuoted],
        ),
        ("echo $'a\\\\' {{ a }}", &[Unquoted]),
        (
            "printf '%s\\n' {{ a }}; printf -- {{ a }}",
            &[Unquoted, Unquoted],
        ),
        // Line continuations: dash, bash (plain and --posix) and busybox ash all remove them
        // inside words, operators, reserved words, `$\⏎(`, `${ }` and here-document
        // delimiters, and keep them inside '…', comments and quoted here-document bodies.
        ("p a &\\\n& echo {{ a }}", &[Unquoted]),
        ("false |\\\n| echo {{ a }}", &[Unquoted]),
        ("case x in x) ;\\\n; esac; echo {{ a }}", &[Unquoted]),
        (
            "ca\\\nse {{ a }} i\\\nn x) echo '{{ a }}';; es\\\nac",
            &[Unquoted, SingleQuoted],
        ),
        ("i\\\nf true; th\\\nen echo {{ a }}; f\\\ni", &[Unquoted]),
        ("cat <\\\n<EOF\nx\nEOF\necho {{ a }}", &[Unquoted]),
        ("cat <<\\\n-EOF\n\tx\n\tEOF\necho {{ a }}", &[Unquoted]),
        ("cat <<EO\\\nF\nx\nEOF\necho {{ a }}", &[Unquoted]),
        ("cat << \\\nEOF\nx\nEOF\necho {{ a }}", &[Unquoted]),
        ("echo $\\\n(echo a) {{ a }}", &[Unquoted]),
        ("echo $(\\\n( 1 )) {{ a }}", &[Unquoted]),
        (
            "echo $\\\n{x:-a} ${x\\\n:-b} \"${x%\\\nc}\" {{ a }}",
            &[Unquoted],
        ),
        (
            "echo 'a\\\n{{ a }}' \"b\\\n{{ a }}\"",
            &[SingleQuoted, DoubleQuoted],
        ),
        ("echo a # c \\\necho {{ a }}", &[Unquoted]),
        ("echo a\\\n#'{{ a }}'", &[SingleQuoted]),
        ("f(\\\n) { echo {{ a }}; }; f", &[Unquoted]),
        // A value on an earlier line does not move where the last line starts.
        ("p {{ a }}\np a\\", &[Unquoted]),
        // A continuation that starts a body line is removed by all four before the delimiter
        // is looked for, so this body ends on its first line.
        ("cat <<EOF\n\\\nEOF\necho {{ a }}\nEOF", &[Unquoted]),
        // `<<-` strips the tabs that start a joined line only, in all four shells.
        ("cat <<-EOF\n\tx\\\n\tEOF\nEOF\necho {{ a }}", &[Unquoted]),
    ];
    for (text, want) in table {
        let got: Vec<Context> = contexts(text).into_iter().map(|(_, c)| c).collect();
        assert_eq!(&got, want, "{text:?}");
    }
}

#[test]
fn unsafe_contexts_are_refused_with_a_fix() {
    let table: &[(&str, &str)] = &[
        ("echo `echo {{ a }}`", "inside backticks"),
        ("echo \"`echo {{ a }}`\"", "inside backticks"),
        ("echo $(echo {{ a }})", "inside $( )"),
        ("echo \"$(echo '{{ a }}')\"", "inside $( )"),
        ("echo $(( {{ a }} + 1 ))", "inside $(( ))"),
        ("echo ${X:-{{ a }}}", "inside ${ }"),
        ("echo \"${X:-{{ a }}}\"", "inside ${ }"),
        ("echo $'{{ a }}'", "inside $' '"),
        ("echo hi # {{ a }}", "inside a comment"),
        ("cat <<EOF\n{{ a }}\nEOF", "here-document"),
        ("cat <<'EOF'\nx {{ a }}\nEOF", "here-document"),
        ("cat <<{{ a }}\nx\n", "here-document"),
        // Regressions found by tests/it/arguments.rs: quoted delimiters with spaces.
        ("cat <<\"E F\"\n{{ a }}\nE F", "here-document"),
        ("cat <<'E F'{{ a }}", "here-document"),
        ("cat <<'E F'\nE\n{{ a }}\nE F", "here-document"),
        ("echo ${{ a }}", "after `$`"),
        ("echo \"${{ a }}\"", "after `$`"),
        ("echo \\{{ a }}", "backslash"),
        ("echo \"\\{{ a }}\"", "backslash"),
        // Regressions found by tests/it/arguments.rs: a `#` that is or is not a comment.
        ("printf '%s' \\\n#{{ a }}", "inside a comment"),
        (
            "echo $(( 1 << 2 )); echo {{ a }} $(( {{ a }} ))",
            "inside $(( ))",
        ),
        ("cat <(echo {{ a }})", "inside <( )"),
        ("(( x = {{ a }} ))", "inside (( ))"),
        // Regression found by tests/it/quoting_fuzz.rs: the shells join `$\<newline>'` into
        // `$'`, which bash reads as an escaped string.
        ("echo $\\\n{{ a }}", "right after `$`"),
        ("echo \"$\\\n{{ a }}\"", "right after `$`"),
        ("cat <\\\n<EOF\n{{ a }}\nEOF", "inside a here-document"),
        // A here-document line that is the delimiter only once its continuation is removed:
        // bash ends the body there, dash and busybox ash read on, so the line below is code to
        // bash and body to dash, where `$( )` and backticks in a value run (with `{{ a }}` a
        // `url` argument, `http://x/$(touch$IFS./PWN)` made the file under dash).
        (
            "cat <<EOF\nEO\\\nF\necho {{ a }}\nEOF",
            "delimiter only once a line continuation is removed",
        ),
        (
            "cat <<EOF\nEOF\\\n\necho {{ a }}\nEOF",
            "delimiter only once a line continuation is removed",
        ),
        (
            "cat <<-EOF\n\tE\\\nOF\necho {{ a }}\nEOF",
            "delimiter only once a line continuation is removed",
        ),
        // dash strips the tab, reads `\` where `E` should be and keeps `\⏎` in the body:
        // the next line is no delimiter line to it. bash joins, strips and ends the body.
        (
            "cat <<-E\n\t\\\n\tE\necho {{ a }}\nE",
            "delimiter only once a line continuation is removed",
        ),
        // Found by tests/shells against the model before this one: the same after a pipe.
        (
            "cat<<END|cat\nE\\\nND\n\"{{ a }}\"",
            "delimiter only once a line continuation is removed",
        ),
        // The shell reads `{\⏎{` as `{{`, actiond as no placeholder.
        ("echo {\\\n{ a }}", "splits a `{{`"),
        ("echo '{\\\n\\\n{ a }}'", "splits a `{{`"),
        // Joined by a continuation, the value still lengthens the name.
        ("echo \"$x\\\n{{ a }}\"", "lengthen the variable's name"),
        // Found by tests/shells: a backslash at the very end escapes nothing. bash drops it
        // when its line began inside a '…' spanning lines, which a value with a newline makes
        // happen (`p 'x⏎y' a\` prints `<x⏎y><a>` under bash, `<x⏎y><a\>` under dash and
        // busybox ash); with a value without one, all four print the backslash.
        ("p \\'{{ a }}\\", "a backslash that ends the command text"),
        ("p {{ a }}; p a\\", "a backslash that ends the command text"),
        // Quote removal and continuations make these the same builtins.
        ("ev\\\nal {{ a }}", "`eval`"),
        ("printf -\\\nv {{ a }} x", "`printf`"),
        // The four templates that passed the old lexer and ran a value under dash.
        (
            "echo \"$(case a in a) echo {{ a }};; esac)\"",
            "inside $( )",
        ),
        (
            "echo \"Result: $(case \"$MODE\" in fast) curl -sI {{ a }};; *) echo {{ a }};; esac)\"",
            "inside $( )",
        ),
        (
            "cat <<EOF\nx\\\nEOF\n{{ a }}\nEOF",
            "inside a here-document",
        ),
        ("echo \"${x:-'}\" '}{{ a }}'", "inside `${ }`"),
        // bash evaluates these as arithmetic or as variable names (`a[$(cmd)]` runs cmd).
        ("[[ {{ a }} -eq 1 ]]", "arithmetic"),
        ("[[ 1 -lt \"{{ a }}\" ]]", "arithmetic"),
        ("[[ -v {{ a }} ]]", "`-v`"),
        ("test -v {{ a }}", "`test`"),
        ("[ {{ a }} {{ a }} ]", "`test`"),
        ("printf -v {{ a }} x", "`printf`"),
        ("printf -v{{ a }} x", "`printf`"),
        ("printf \"{{ a }}\"", "`printf`"),
        ("read {{ a }} </dev/null", "`read`"),
        ("command read -r {{ a }}", "`read`"),
        ("command -p read -r {{ a }}", "`read`"),
        // Quote removal makes these the same builtins.
        ("\\read {{ a }}", "`read`"),
        ("re\"a\"d {{ a }}", "`read`"),
        ("'printf' '-v' {{ a }} x", "`printf`"),
        ("[ '-v' {{ a }} ]", "`test`"),
        // A command whose name is an expansion or a value could be any builtin (`eval`).
        ("$CMD {{ a }}", "name comes from an expansion"),
        ("{{ a }} {{ a }}", "name comes from an expansion"),
        ("rea$'d' {{ a }}", "name comes from an expansion"),
        ("eval {{ a }}", "`eval`"),
        ("let x={{ a }}", "`let`"),
        ("export {{ a }}=1", "`export`"),
        ("a[{{ a }}]=1", "array subscript"),
        ("declare -i n\nn={{ a }}", "`declare -i`"),
        ("alias p='printf %s \"'\np {{ a }}\"", "`alias`"),
        // Where the shells disagree, or the model does not follow.
        ("echo $'\\'' {{ a }}'", "inside `$'…'`"),
        ("echo $\"{{ a }}\"", "inside $\" \""),
        ("echo $[1] {{ a }}", "`$[ ]`"),
        (
            "cat <<EOF\n$(echo \"\nEOF\n\")\nEOF\necho {{ a }}",
            "runs past it",
        ),
        ("echo ${x:-{a}} {{ a }}", "inside `${ }`"),
        ("[[ x =~ (a|b) ]] && echo {{ a }}", "`=~`"),
        // Regressions: these once made the `[[` scan loop forever.
        ("[[ a =~ ; echo {{ a }}", "operator inside `[[ ]]`"),
        ("[[ a =~\necho {{ a }}", "`[[` without `]]`"),
        // Found by tests/shells: dash and ash read `((` as two subshells, where `<<2` opens a
        // here-document whose body holds the value (bash reads a shift).
        ("'';((<<2))\n(()){{ a }}", "`(( ))` with"),
        // Found by tests/shells: dash and ash read `[[` as a command, where `#` starts a
        // comment that a newline in the value ends.
        ("[[\t#\"{{ a }}\" ]]", "`#` inside `[[ ]]`"),
        (
            "cat<<<''\n[[ # ]] $(((()))){{ a }}\n)",
            "`#` inside `[[ ]]`",
        ),
        // Found by tests/shells under busybox ash: after `${x/pattern}` with no replacement,
        // ash reads the rest of the word as part of the expansion (`${x/}'/a/b'` is `kk b`).
        ("p ${x/a}{{ a }}", "without a replacement"),
        ("p \"${x/}{{ a }}\"", "without a replacement"),
        ("p \"${@/}\"'{{ a }}'", "without a replacement"),
        // Found by tests/shells in all four shells: inside double quotes a value right after
        // `$x` lengthens the name (`"$xvalue"`), so the value never arrives.
        ("cat<<<\"$x{{ a }}\"", "lengthen the variable's name"),
        (
            "case \"a$x{{ a }}\" in x) ;; esac",
            "lengthen the variable's name",
        ),
    ];
    let mut wrong = Vec::new();
    for (text, why) in table {
        let err = match Template::shell(text) {
            Ok(t) => {
                let rendered = t.render(&|_| Some("V".into()));
                wrong.push(format!("{text:?} was accepted: {rendered:?}"));
                continue;
            }
            Err(e) => e.message,
        };
        // Every refusal says why, and how to fix it: where bash reads the value again, the
        // fix is that place's own (`reread::Rereading::hint`).
        let hint = (err.contains("exec:") && err.contains("environment variable"))
            || [
                reread::Rereading::Arithmetic,
                reread::Rereading::Code,
                reread::Rereading::Name,
                reread::Rereading::Redirection,
            ]
            .iter()
            .any(|r| err.contains(r.hint()));
        if !err.contains(why) || !hint {
            wrong.push(format!("{text:?}: {err}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn placeholder_forms() {
    assert_eq!(contexts("x {{ .Arguments.host }}")[0].0, arg("host"));
    assert_eq!(
        contexts("x {{ .CurrentEntity.Names }}")[0].0,
        Placeholder::Entity("Names".into())
    );
    assert_eq!(
        contexts("x {{ server.hostname }}")[0].0,
        Placeholder::Entity("hostname".into())
    );
    assert_eq!(
        contexts("x {{ a.b.c }}")[0].0,
        Placeholder::Entity("b.c".into())
    );
    for bad in [
        "x {{ }}",
        "x {{.Names}}",
        "x {{ a b }}",
        "x {{ a",
        "x {{ $(id) }}",
        "x {{ a. }}",
    ] {
        assert!(Template::shell(bad).is_err(), "{bad}");
        assert!(Template::literal(bad).is_err(), "{bad}");
    }
}

/// Every context × every metacharacter, checked by the quoting function alone.
#[test]
fn quoting_table() {
    use Context::*;
    let table: &[(&str, Context, &str)] = &[
        ("plain", Unquoted, "'plain'"),
        ("", Unquoted, "''"),
        ("it's", Unquoted, "'it'\\''s'"),
        ("a\"b", Unquoted, "'a\"b'"),
        ("$(id)", Unquoted, "'$(id)'"),
        ("`id`", Unquoted, "'`id`'"),
        ("a\\b", Unquoted, "'a\\b'"),
        ("a\nb", Unquoted, "'a\nb'"),
        ("plain", DoubleQuoted, "plain"),
        ("a\"b", DoubleQuoted, "a\\\"b"),
        ("$(id)", DoubleQuoted, "\\$(id)"),
        ("`id`", DoubleQuoted, "\\`id\\`"),
        ("a\\b", DoubleQuoted, "a\\\\b"),
        ("it's", DoubleQuoted, "it's"),
        ("it's", SingleQuoted, "''it'\\''s''"),
        ("$(id)", SingleQuoted, "''$(id)''"),
        ("", SingleQuoted, "''''"),
        ("a'b\"c", Literal, "a'b\"c"),
    ];
    for (value, ctx, want) in table {
        let mut out = String::new();
        quote_into(&mut out, value, *ctx);
        assert_eq!(&out, want, "{value:?} {ctx:?}");
    }
}

/// The same metacharacters through a real shell: what the command prints is the value.
#[test]
fn real_sh_reads_back_every_metacharacter_in_every_context() {
    let value = "' \" ` $( ) ${ } $IFS ; | & && > < * ? ~ # ! \\ \\\\ -n -- \n\t\r {{ v }} é 😀";
    for template in [
        "printf '%s' {{ v }}",
        "printf '%s' \"{{ v }}\"",
        "printf '%s' '{{ v }}'",
        "printf '%s' \"a{{ v }}b\"",
        "printf '%s' 'a{{ v }}b'",
        "printf '%s' a{{ v }}b{{ v }}",
    ] {
        let t = Template::shell(template).unwrap();
        let script = t.render(&|_| Some(value.to_string()));
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let got = String::from_utf8(out.stdout).unwrap();
        let want = if template.contains("a{{") {
            if template.contains("b{{") {
                format!("a{value}b{value}")
            } else {
                format!("a{value}b")
            }
        } else {
            value.to_string()
        };
        assert_eq!(got, want, "{template}");
    }
}

#[test]
fn one_pass_never_expands_a_value_again() {
    let t = Template::shell("echo {{ a }} {{ b }}").unwrap();
    let s = t.render(&|p| match p {
        Placeholder::Argument(n) if n == "a" => Some("{{ b }}".into()),
        _ => Some("B".into()),
    });
    assert_eq!(s, "echo '{{ b }}' 'B'");
}

#[test]
fn literal_templates_substitute_as_is() {
    let t = Template::literal("--host={{ host }}").unwrap();
    assert_eq!(t.render(&|_| Some("a b'c".into())), "--host=a b'c");
    assert!(!Template::literal("plain").unwrap().has_placeholders());
}

#[test]
fn text_without_placeholders_renders_unchanged() {
    for text in [
        "echo \"it's\" | tr a b",
        "cat <<EOF\n$x\nEOF",
        "echo ${X:-y} `date` # c",
        "a\\",
    ] {
        assert_eq!(
            Template::shell(text).unwrap().render(&|_| None),
            *text,
            "{text:?}"
        );
    }
}

/// The variables a command expands outside quotes, where the shell splits and globs the value
/// (`config::command` refuses or warns about an argument's): quoting as real shells read it.
#[test]
fn unquoted_expansions_are_noted_as_shells_quote() {
    let cases: &[(&str, &[&str])] = &[
        ("rm -f cache/$NAME", &["NAME"]),
        ("rm -f \"cache/$NAME\"", &[]),
        ("echo ${NAME}", &["NAME"]),
        ("echo ${NAME:-x} ${OTHER%.*}", &["NAME", "OTHER"]),
        ("echo \"a ${NAME} b\"", &[]),
        ("echo '$NAME'", &[]),
        ("echo \\$NAME", &[]),
        ("echo $'$NAME'", &[]),
        ("echo ${#NAME}", &[]),
        ("echo $NAMES", &["NAMES"]),
        // An assignment's value is not split: with NAME `a b` and `f*` (files `X=f1`, `X=f2`
        // beside), `X=$NAME; printf '[%s]' "$X"` prints `[a b]` and `[f*]`, and `X=$NAME env`
        // puts `X=a b` and `X=f*` in the environment, under dash 0.5.12, bash 5.2 (and
        // `--posix`) and busybox 1.35 ash alike (`tests/shells`, `assignments_split_...`).
        ("x=$NAME; echo \"$x\"", &[]),
        ("FOO=$NAME env", &[]),
        ("FOO=$NAME BAR=${OTHER} env", &[]),
        ("FOO=\"$NAME\" env", &[]),
        // A word shaped like an assignment that is a command's argument is split and globbed
        // in all four: `printf '[%s]' X=$NAME` prints `[X=a][b]` and `[X=f1][X=f2]`.
        ("printf '[%s]' X=$NAME", &["NAME"]),
        ("echo ${NAME}=x", &["NAME"]),
        // The declaration utilities: dash 0.5.12, bash 5.2 and busybox 1.35 ash read their
        // `X=$NAME` as an assignment (`[a b]`, `[f*]`), but dash before 0.5.11 and any shell
        // of POSIX.1-2017 split it, and bash splits it behind `command` (`[a]`, `[f2]`) or a
        // variable (`$e X=$NAME` with e=export): refused or warned about like any argument.
        ("export X=$NAME", &["NAME"]),
        ("export -- X=$NAME", &["NAME"]),
        ("f() { local X=$NAME; }", &["NAME"]),
        ("readonly X=$NAME", &["NAME"]),
        ("declare X=$NAME", &["NAME"]),
        ("typeset X=$NAME", &["NAME"]),
        ("command export X=$NAME", &["NAME"]),
        ("export X=\"$NAME\"", &[]),
        // `command` names the command: what follows is its argument.
        ("command X=$NAME", &["NAME"]),
        // Inside `$( )` a word is split again, even in a double-quoted `"$( )"`.
        ("echo \"$(echo $NAME)\"", &["NAME"]),
        ("echo \"$(echo \"$NAME\")\"", &[]),
        // Here-document bodies are not split.
        ("cat <<EOF\n$NAME\nEOF", &[]),
        ("cat <<'EOF'\n$NAME\nEOF", &[]),
        ("cat <<EOF\n$NAME\nEOF\necho $NAME", &["NAME"]),
        // The positional parameters are noted as written, a variable named by a value as
        // `!name`; `$?`, `$$` and `$#` hold no value of the command's. `$0` is noted: it
        // holds the word after the script of `sh -c` (`judge` follows it there).
        ("echo $1 $@ $? $$ $0 $#", &["0", "1", "@"]),
        // The shells join a line continuation inside a name (dash, bash, bash --posix and
        // busybox ash all print <old><-r><victim> for `printf "<%s>" $ACTIOND_ARG_\⏎NAME`
        // with `old -r victim`).
        ("echo $ACTIOND_ARG_\\\nNAME", &["ACTIOND_ARG_NAME"]),
        ("echo ${ACTIOND_ARG_\\\nNAME}", &["ACTIOND_ARG_NAME"]),
        ("echo $\\\nNAME ${\\\n!x}", &["!x", "NAME"]),
        ("echo ${1\\\n0}", &["10"]),
        // The value of `${x:-WORD}` and its kin stands unquoted too (all four split
        // `${x:-$NAME}`, `${x:=$NAME}`, `${x:+$NAME}` with x set, `${x/a/$NAME}` in bash and
        // ash); a pattern is no value, but is noted all the same.
        (
            "echo ${x:-$NAME} ${y:+$A} ${z=$B} ${w:=${C}} ${v?$D}",
            &["A", "B", "C", "D", "NAME", "v", "w", "x", "y", "z"],
        ),
        ("echo ${x/a/$NAME}", &["NAME", "x"]),
        ("echo \"${x:-$NAME}\" y=${x:-$A}", &["A", "x"]),
        ("y=${x:-$NAME}", &[]),
        ("echo ${10} $10 $* ${!x} \"${!y}\"", &["!x", "*", "1", "10"]),
    ];
    for (text, want) in cases {
        let (_, analysis) = read_shell(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        let got: Vec<&str> = analysis.unquoted.keys().map(String::as_str).collect();
        assert_eq!(got, *want, "{text:?}");
    }
    let (_, analysis) = read_shell("true\necho $NAME").unwrap();
    assert_eq!(analysis.unquoted.get("NAME"), Some(&2));
}

/// Where a value may start the word it stands in, and so be read as an option when it
/// starts with `-`: the placeholders `leading` names, by argument name, for `shell:` and for
/// an `exec:` element.
#[test]
fn a_placeholder_leads_its_word_only_with_nothing_written_before_it() {
    let names = |t: Template| -> Vec<String> {
        t.leading()
            .map(|p| match p {
                Placeholder::Argument(n) | Placeholder::Entity(n) => n.clone(),
            })
            .collect()
    };
    let shell: &[(&str, &[&str])] = &[
        ("ls {{ a }}", &["a"]),
        ("ls \"{{ a }}\"", &["a"]),
        ("ls '{{ a }}'", &["a"]),
        ("ls \"\"{{ a }}", &["a"]),
        ("ls ''\"{{ a }}\"", &["a"]),
        ("ls $EMPTY{{ a }}", &["a"]),
        ("ls {{ a }}{{ b }}", &["a", "b"]),
        ("ls {{ a }}/bin", &["a"]),
        ("ls {{ .CurrentEntity.name }}", &["name"]),
        ("ls x {{ a }} y", &["a"]),
        ("ls --name={{ a }}", &[]),
        ("ls /srv/{{ a }}", &[]),
        ("ls \"/srv/{{ a }}\"", &[]),
        ("ls ./{{ a }}", &[]),
        ("ls x{{ a }}", &[]),
        ("ls '-'{{ a }}", &[]),
        ("ls \\x{{ a }}", &[]),
        ("ls --name=\"{{ .CurrentEntity.name }}\" {{ b }}", &["b"]),
        // bash's brace expansion: `{,x}-rf` is `-rf` and `x-rf` (dash and ash keep it as
        // it is: tests/shells, `copies`).
        ("ls {,x}{{ a }}", &["a"]),
        ("ls {a,b}{1..2}{{ a }}", &["a"]),
        ("ls {a}{{ a }} x{,y}{{ b }}", &[]),
    ];
    for (text, want) in shell {
        assert_eq!(
            &names(Template::shell(text).unwrap()),
            want,
            "shell: {text}"
        );
    }
    let exec: &[(&str, &[&str])] = &[
        ("{{ a }}", &["a"]),
        ("{{ a }}{{ b }}", &["a", "b"]),
        ("{{ a }}/x", &["a"]),
        ("--name={{ a }}", &[]),
        ("/srv/{{ a }}", &[]),
        ("x{{ a }}{{ b }}", &[]),
        ("plain", &[]),
    ];
    for (text, want) in exec {
        assert_eq!(
            &names(Template::literal(text).unwrap()),
            want,
            "exec: {text}"
        );
    }
    // HTML is never a command line.
    assert!(
        Template::html("<b>{{ a }}</b>")
            .unwrap()
            .leading()
            .next()
            .is_none()
    );
}
