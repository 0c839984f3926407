//! The tables of `programs`: which words of a command are scripts, programs and what it
//! does with its standard input, word by word.

use super::*;

fn words<'a>(words: &'a [&'a str]) -> Vec<Option<&'a [u8]>> {
    words
        .iter()
        .map(|w| (*w != "$").then_some(w.as_bytes()))
        .collect()
}

fn found(w: &[&str]) -> Vec<usize> {
    scripts(&words(w)).into_iter().map(|(i, _)| i).collect()
}

#[test]
fn the_script_of_a_shell_is_found_behind_any_wrapper() {
    let table: &[(&[&str], &[usize])] = &[
        (&["sh", "-c", "s"], &[2]),
        (&["/bin/bash", "-ec", "s", "x"], &[2]),
        (&["bash", "-o", "pipefail", "-c", "s"], &[4]),
        (&["bash", "-c", "-e", "s"], &[3]),
        (&["bash", "-c", "--", "s"], &[3]),
        (&["busybox", "sh", "-c", "s"], &[3]),
        (&["env", "A=1", "sh", "-c", "s"], &[4]),
        (&["sudo", "-u", "pi", "dash", "-c", "s"], &[5]),
        (&["timeout", "5", "zsh", "-c", "s"], &[4]),
        (&["sh", "$", "s"], &[1, 2]),
        (&["su", "-", "pi", "-c", "s"], &[4]),
        (&["su", "--command=s"], &[1]),
        (&["env", "-S", "s"], &[2]),
        (&["env", "-Ss"], &[1]),
        // Programs that hand a word to `sh -c` themselves.
        (&["flock", "/run/l", "-c", "s"], &[3]),
        (&["flock", "-w", "5", "/run/l", "-c", "s"], &[5]),
        (&["nohup", "flock", "l", "--command", "s"], &[4]),
        (&["flock", "l", "sh", "-c", "s"], &[4]),
        (&["script", "-qc", "s", "/dev/null"], &[2]),
        (&["script", "-q", "-c", "s"], &[3]),
        (&["script", "--command", "s"], &[2]),
        (&["sg", "root", "s"], &[2]),
        (&["sg", "root", "-c", "s"], &[3]),
        (&["sudo", "sg", "-", "root", "s"], &[4]),
        (&["watch", "-n", "5", "s", "t"], &[3, 4]),
        (&["ssh", "-i", "key", "-p", "22", "host", "s", "t"], &[6, 7]),
        (&["ssh", "host"], &[]),
        (&["watch", "-x", "ls", "x"], &[]),
        (&["flock", "l", "rm", "x"], &[]),
        // What `find -exec` and `xargs -I` paste into a script.
        (&["find", ".", "-exec", "sh", "-c", "echo {}", ";"], &[5]),
        (&["xargs", "-I", "X", "sh", "-c", "echo X"], &[5]),
        // No `-c`: a script file, whose arguments are data.
        (&["sh", "script.sh", "x"], &[]),
        (&["bash", "-e", "script.sh"], &[]),
        (&["echo", "x"], &[]),
        (&["shellcheck", "-c", "x"], &[]),
        (&["echo", "ssh", "host", "$"], &[]),
        (&["grep", "watch", "$"], &[]),
        // GNU parallel: its command's words, or with none the arguments after `:::`.
        (&["parallel", "-j", "4", "rm", "$", ":::", "x"], &[3, 4]),
        (&["parallel", ":::", "a", "b", "::::", "f"], &[2, 3]),
        (&["parallel", "--tag", "rm", "{}", ":::", "$"], &[2, 3]),
        (&["parallel", "-q", "rm", "$", ":::", "x"], &[]),
        // An awk program that runs commands: what gives it data (`-v`, operands).
        (&["awk", "-v", "$", "BEGIN{system(\"ls \" x)}"], &[2]),
        (&["awk", "-F:", "{print | \"sort\"}", "$"], &[3]),
        (
            &["awk", "-F:", "{system(\"ls\")}", "/etc/passwd", "$"],
            &[4],
        ),
        (&["awk", "-v", "$", "{print x}", "$"], &[]),
        (&["awk", "$1 || $2", "$"], &[]),
        (&["awk", "-f", "prog.awk", "$"], &[]),
    ];
    for (w, want) in table {
        assert_eq!(&found(w), want, "{w:?}");
    }
    let pasted = |w: &[&str]| {
        scripts(&words(w))
            .into_iter()
            .map(|(_, p)| p)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pasted(&["find", ".", "-exec", "sh", "-c", "echo {}", ";"]),
        [PASTED]
    );
    assert_eq!(
        pasted(&["xargs", "-I", "X", "sh", "-c", "echo X"]),
        [PASTED]
    );
    assert_eq!(
        pasted(&[
            "find",
            ".",
            "-exec",
            "sh",
            "-c",
            "echo \"$1\"",
            "sh",
            "{}",
            ";"
        ]),
        [SCRIPT]
    );
}

#[test]
fn the_program_is_found_behind_its_wrappers() {
    let table: &[(&[&str], &[usize])] = &[
        (&["$"], &[0]),
        (&["ls", "$"], &[0]),
        (&["env", "$"], &[0, 1]),
        (&["env", "-i", "-u", "X", "A=1", "$", "x"], &[0, 5]),
        (&["/usr/bin/env", "A=$", "prog"], &[0, 2]),
        (&["exec", "-a", "name", "$"], &[0, 3]),
        (&["nohup", "timeout", "-s", "KILL", "5", "$"], &[0, 1, 5]),
        (&["sudo", "-u", "pi", "nice", "-n", "5", "$"], &[0, 3, 6]),
        (&["xargs", "-n", "1", "$"], &[0, 3]),
        (&["flock", "-w", "5", "l", "$"], &[0, 4]),
        (&["flock", "l", "-c", "s"], &[0]),
        (&["command", "-v", "$"], &[0, 2]),
        (&["timeout", "5"], &[0]),
        // `find -exec PROG`: its first -exec's program, behind any wrapper.
        (&["find", "/srv", "-exec", "$", "{}", "+"], &[0, 3]),
        (
            &["find", ".", "-name", "x", "-exec", "nice", "$", ";"],
            &[0, 5, 6],
        ),
        (
            &["find", ".", "-execdir", "sed", "-i", "s/a/b/", "{}", "+"],
            &[0, 3],
        ),
        (&["find", ".", "-delete"], &[0]),
    ];
    for (w, want) in table {
        let got: Vec<usize> = chain(&words(w));
        assert_eq!(&got, want, "{w:?}");
    }
    let files = |w: &[&str]| -> Vec<usize> {
        programs(&words(w))
            .into_iter()
            .filter(|(_, p)| *p == SCRIPT_FILE)
            .map(|(i, _)| i)
            .collect()
    };
    assert_eq!(files(&["sh", "--", "$"]), [2]);
    assert_eq!(files(&["bash", "<()"]), [1]);
    assert_eq!(files(&["bash", "-e", "--", "$", "x"]), [3]);
    assert_eq!(files(&["sh", "-c", "$"]), Vec::<usize>::new());
    assert_eq!(files(&["sh", "-s", "$"]), Vec::<usize>::new());
}

#[test]
fn what_a_program_does_with_its_standard_input() {
    let code = Some(Stdin::Code(STDIN_SCRIPT));
    let split = Some(Stdin::Split(XARGS_INPUT));
    let table: &[(&[&str], Option<Stdin>)] = &[
        (&["sh"], code),
        (&["bash", "-x"], code),
        (&["sh", "-s", "--", "$"], code),
        (&["sh", "-es", "a"], code),
        (&["sh", "/dev/stdin", "$"], code),
        (&["bash", "/proc/self/fd/0"], code),
        (&["dash", "/dev/fd/3"], code),
        (&["sh", "-"], code),
        (&["busybox", "sh"], code),
        (&["sudo", "-u", "pi", "bash"], code),
        (&["env", "A=1", "nohup", "sh"], code),
        (&["xargs", "rm"], split),
        (&["xargs", "-n1", "rm"], split),
        (&["nice", "xargs", "rm"], split),
        (&["xargs", "-0", "rm"], None),
        (&["xargs", "-r0", "rm"], None),
        (&["xargs", "--null", "rm"], None),
        (&["xargs", "-n10", "rm"], split),
        (&["sh", "-c", "s"], None),
        (&["sh", "script.sh"], None),
        (&["grep", "sh"], None),
        (&["echo", "xargs"], None),
        (&["cat"], None),
        // What logs in reads its input as commands: `su USER`, `ssh HOST`.
        (&["su", "pi"], Some(Stdin::Code(LOGIN_SHELL))),
        (&["su", "-l", "pi"], Some(Stdin::Code(LOGIN_SHELL))),
        (&["su", "-lc", "cat", "pi"], None),
        (&["su", "pi", "--command=cat"], None),
        (&["runuser", "-u", "pi", "--", "cat"], None),
        (&["runuser", "-u", "pi", "--", "sh"], code),
        (&["runuser", "-u", "pi", "bash", "-s"], code),
        (&["ssh", "-p", "22", "host", "cat"], None),
        (&["ssh", "-nT", "host"], None),
        // A shell behind `docker exec -i` reads it; `cat` does not.
        (&["docker", "exec", "-i", "c", "sh"], code),
        (&["docker", "exec", "-it", "-w", "/", "c", "bash"], code),
        (&["docker", "exec", "-i", "c", "cat"], None),
        (&["docker", "exec", "c", "sh"], None),
        (&["parallel", "rm"], None),
        (&["awk", "{system(\"ls \" $1)}"], Some(Stdin::Code(AWK))),
        (
            &["awk", "BEGIN { getline x; system(\"ls \" x) }"],
            Some(Stdin::Code(AWK)),
        ),
        (&["awk", "BEGIN { system(\"ls\") }"], None),
        (&["awk", "{print $1}"], None),
    ];
    for (w, want) in table {
        assert_eq!(&stdin(&words(w)), want, "{w:?}");
    }
    assert!(matches!(
        stdin(&words(&[".", "/dev/stdin"])),
        Some(Stdin::Code(_))
    ));
    assert!(matches!(
        stdin(&words(&["at", "now"])),
        Some(Stdin::Code(_))
    ));
    assert_eq!(stdin(&words(&["at", "-f", "job", "now"])), None);
    for w in [
        &["ssh", "host"][..],
        &["parallel"],
        &["docker", "run", "-i", "alpine"],
    ] {
        assert!(matches!(stdin(&words(w)), Some(Stdin::Code(_))), "{w:?}");
    }
}
