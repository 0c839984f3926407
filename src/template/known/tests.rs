//! The table of `known`: which words of a command are arguments of a program the model does
//! not know, word by word (`$` stands for a word from an expansion or a value).

use super::*;

fn words<'a>(words: &'a [&'a str]) -> Vec<Option<&'a [u8]>> {
    words
        .iter()
        .map(|w| (*w != "$").then_some(w.as_bytes()))
        .collect()
}

fn found(w: &[&str]) -> Option<(String, Vec<usize>)> {
    unknown(&words(w), None)
}

#[test]
fn every_argument_of_a_program_the_model_does_not_know_may_be_a_program() {
    // The wrappers a tester found accepted, each with a value where it runs a program.
    let wrappers: &[&[&str]] = &[
        &["taskset", "1", "$"],
        &["taskset", "-c", "0", "$"],
        &["chrt", "-i", "0", "$", "$"],
        &["runuser", "-u", "nobody", "--", "$"],
        &["setpriv", "--reuid", "1000", "$"],
        &["unshare", "-n", "$"],
        &["nsenter", "-t", "1", "-m", "$"],
        &["ip", "netns", "exec", "x", "$"],
        &["ip", "vrf", "exec", "x", "$"],
        &["systemd-run", "--wait", "$"],
        &["start-stop-daemon", "--start", "--exec", "$"],
        &["su", "pi", "-s", "$"],
        &["pkexec", "$"],
        &["firejail", "$"],
        &["bwrap", "--ro-bind", "/", "/", "$"],
        &["dbus-run-session", "--", "$"],
        &["fakeroot", "$"],
        &["eatmydata", "$"],
        &["strace", "-f", "$"],
        &["docker", "run", "--rm", "img", "$"],
        &["docker", "exec", "c", "$"],
        &["docker", "compose", "run", "svc", "$"],
        // fe30v F12: a subcommand not known to run no program (a CLI plugin, `kube play`,
        // `build`, `context`), or a daemon from a value.
        &["docker", "scout", "cves", "$"],
        &["podman", "kube", "play", "$"],
        &["podman", "play", "kube", "$"],
        &["docker", "build", "-f", "$", "."],
        &["docker", "image", "build", "$"],
        &["docker", "context", "use", "$"],
        &["docker", "-H", "$", "ps"],
        &["docker", "volume", "create", "$"],
        &["podman", "exec", "c", "$"],
        &["kubectl", "exec", "p", "--", "$"],
        &["busybox", "chpst", "-u", "pi", "$"],
        &["busybox", "taskset", "1", "$"],
        &["nice", "-n", "10", "chrt", "-i", "0", "$"],
        &["sudo", "-u", "pi", "taskset", "1", "$"],
        &["/usr/lib/x/wrap", "$"],
        &["sh", "/usr/lib/x/wrap", "$"],
        &["python3", "-m", "mod", "$"],
        // Program text from an expansion is nobody's to read.
        &["python3", "-c", "$", "$"],
        &["python3", "/usr/lib/python3/dist-packages/x.py", "$"],
        &["/usr/lib/x/echo", "$"],
        &["awk", "{print}", "$"],
        &["yt-dlp", "$"],
        &["git", "$"],
        &["git", "-C", "/srv/repo", "$", "x"],
        &["nc", "-e", "$"],
        // Too wide to audit (`audit`): taken out of the trusted list.
        &["ffmpeg", "-i", "$", "out.mp4"],
        &["ffprobe", "$"],
        &["mount", "-t", "fuse", "$", "/mnt"],
        &["xdg-open", "$"],
        &["parallel", "-j", "4", "taskset", "1", "{}", ":::", "$"],
        &["parallel", ":::", "$"],
    ];
    for w in wrappers {
        let got = found(w);
        let values: Vec<usize> = (0..w.len()).filter(|&i| w[i] == "$").collect();
        let Some((_, at)) = &got else {
            panic!("{w:?}: no unknown program found");
        };
        assert!(
            values.iter().all(|v| at.contains(v)),
            "{w:?}: {got:?} misses a value"
        );
    }
}

#[test]
fn the_arguments_of_a_program_the_model_knows_are_data() {
    let table: &[&[&str]] = &[
        &["echo", "$"],
        &["ping", "-c", "3", "$"],
        &["curl", "-fsS", "$"],
        &["/usr/bin/curl", "$"],
        &["/bin/rm", "-f", "--", "$"],
        &["wget", "-q", "$"],
        &["ssh", "$", "reboot"],
        &["wakeonlan", "$"],
        &["etherwake", "-i", "eth0", "$"],
        &["mpc", "play", "$"],
        &["systemctl", "restart", "$"],
        &["docker", "restart", "$"],
        &["docker", "--host", "h", "logs", "$"],
        &["docker", "-c", "nas", "image", "rm", "$"],
        &["podman", "stop", "$"],
        &["docker", "tag", "$", "app:latest"],
        &["docker", "load", "-i", "$"],
        &["ip", "link", "set", "$", "up"],
        &["nice", "-n", "10", "curl", "$"],
        &["parallel", "rm", "--", "{}", ":::", "$"],
        &["sudo", "systemctl", "restart", "$"],
        &["timeout", "5", "ping", "$"],
        // A program from a value is `programs`' (refused there as the program itself).
        &["$", "x"],
        &["nice", "$"],
        // A shell's script is read itself.
        &["sh", "-c", "echo \"$1\"", "sh", "$"],
        &["bash", "-s", "$"],
        // Nothing after the program.
        &["/opt/run.sh"],
        // The author's own scripts, named by a path outside the system's program
        // directories, and run by a shell or an interpreter.
        &["./run.sh", "$"],
        &["/config/backup.sh", "$"],
        &["/usr/local/bin/myscript", "$"],
        &["sh", "/opt/run.sh", "$"],
        &["sh", "run.sh", "$"],
        &["python3", "tool.py", "$"],
        &["/usr/bin/python3.11", "/srv/x/tool.py", "$"],
        &["perl", "x.pl", "$"],
        // Program text written out in the command is the author's too.
        &["python3", "-c", "import sys; print(sys.argv[1])", "$"],
        &["perl", "-e", "print $ARGV[0]", "$"],
        &["node", "-e", "console.log(process.argv[1])", "$"],
        // Their code is read by `own`; the other words are files, patterns and databases.
        &["sed", "-n", "p", "$"],
        &["find", "/srv", "-name", "$", "-exec", "rm", "--", "{}", "+"],
        &["find", "/srv", "-name", "$"],
        &["sqlite3", "$", "select 1"],
        &["git", "-C", "/srv/repo", "checkout", "$"],
    ];
    for w in table {
        assert_eq!(found(w), None, "{w:?}");
    }
}

#[test]
fn the_program_is_named_as_written() {
    assert_eq!(
        found(&["nice", "chrt", "-i", "0", "$"]),
        Some(("chrt".to_string(), vec![2, 3, 4]))
    );
    assert_eq!(
        found(&["sh", "/usr/lib/x/wrap", "$"]),
        Some(("/usr/lib/x/wrap".to_string(), vec![2]))
    );
}

#[test]
fn an_interpreters_program_text_is_found() {
    let texts = |w: &[&str]| program_texts(&words(w));
    let table: &[(&[&str], &[usize])] = &[
        (&["python3", "-c", "$"], &[2]),
        (&["/usr/bin/python3.11", "-u", "-c", "$"], &[3]),
        (&["sudo", "python3", "-c", "$"], &[3]),
        (&["perl", "-e", "$"], &[2]),
        (&["perl", "-ne", "$", "f"], &[2]),
        (&["perl", "-E$"], &[1]),
        (&["ruby", "-e", "$"], &[2]),
        (&["node", "-e", "$"], &[2]),
        (&["node", "--eval=$"], &[1]),
        (&["php", "-r", "$"], &[2]),
        (&["lua", "-e", "$"], &[2]),
        // A script file's arguments are data.
        (&["python3", "tool.py", "$"], &[]),
        (&["python3", "-c", "import sys", "$"], &[2]),
        (&["echo", "-e", "$"], &[]),
    ];
    for &(w, want) in table {
        assert_eq!(texts(w), want, "{w:?}");
    }
}
