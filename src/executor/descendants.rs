//! Which processes belong to an execution when there is no cgroup to say so: a snapshot of
//! /proc, and `attribute`, the pure rule over it.
//!
//! actiond is a child subreaper, so everything an execution starts stays below actiond in the
//! process tree, even after `setsid` and a double fork (an orphan lands on actiond, not on
//! PID 1). Only processes below actiond are ever candidates. Among them a process belongs to
//! the execution when it is in the execution's process group, when its environment holds the
//! execution's `ACTIOND_TRACKING_ID`, or when its parent belongs (which catches `env -i`
//! children while their parent lives). What this cannot see: a process that cleared its
//! environment, left the group, and whose parent has already exited; the cgroup mode has no
//! such gap. The module reads /proc and nothing else; it signals nothing.

use std::collections::HashMap;

/// One process of the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub zombie: bool,
    /// Its environment holds the execution's tracking id.
    pub marked: bool,
}

/// The pids of `procs` that belong to the execution whose group is `pgid`, below `root`
/// (actiond). Zombies are included: they are gone only once reaped.
pub fn attribute(procs: &[Proc], root: i32, pgid: i32) -> Vec<i32> {
    let by_pid: HashMap<i32, &Proc> = procs.iter().map(|p| (p.pid, p)).collect();
    // pid → (below actiond, member), filled along each walk up the tree.
    let mut known: HashMap<i32, (bool, bool)> = HashMap::new();
    for p in procs {
        let mut chain: Vec<&Proc> = Vec::new();
        let mut cur = p.pid;
        // What the walk ended on: actiond (below, not a member), a process already known, or
        // something that is not below actiond (PID 1, an unknown parent, a cycle).
        let (below, mut member) = loop {
            if cur == root {
                break (true, false);
            }
            if let Some(&k) = known.get(&cur) {
                break k;
            }
            match by_pid.get(&cur) {
                Some(c) if cur > 1 && chain.len() <= procs.len() => {
                    chain.push(c);
                    cur = c.ppid;
                }
                _ => break (false, false),
            }
        };
        for c in chain.iter().rev() {
            member = below && (member || c.marked || c.pgid == pgid);
            known.insert(c.pid, (below, member));
        }
    }
    procs
        .iter()
        .filter(|p| known.get(&p.pid).is_some_and(|&(_, m)| m))
        .map(|p| p.pid)
        .collect()
}

/// The processes below actiond now, each marked when its environment holds
/// `ACTIOND_TRACKING_ID=tracking_id`. Only descendants' environments are read.
pub fn snapshot(tracking_id: &str) -> Vec<Proc> {
    let root = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut procs: Vec<Proc> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_stat)
        .collect();
    let by_pid: HashMap<i32, i32> = procs.iter().map(|p| (p.pid, p.ppid)).collect();
    let needle = format!("ACTIOND_TRACKING_ID={tracking_id}");
    for p in &mut procs {
        if p.pid != root && descends(&by_pid, p.pid, root) {
            p.marked = std::fs::read(format!("/proc/{}/environ", p.pid))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == needle.as_bytes()));
        }
    }
    procs
}

fn descends(by_pid: &HashMap<i32, i32>, pid: i32, root: i32) -> bool {
    let mut cur = pid;
    for _ in 0..by_pid.len() + 1 {
        match by_pid.get(&cur) {
            Some(&ppid) if ppid == root => return true,
            Some(&ppid) if ppid > 1 && ppid != cur => cur = ppid,
            _ => return false,
        }
    }
    false
}

/// `pid ppid pgid` and the state from `/proc/<pid>/stat` (the command name may hold spaces
/// and parentheses, so the fields are read after the last `)`).
fn read_stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

pub(crate) fn parse_stat(text: &str) -> Option<Proc> {
    let open = text.find(" (")?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let mut rest = text[close + 1..].split_whitespace();
    let state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgid = rest.next()?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        pgid,
        zombie: state == "Z" || state == "X",
        marked: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, pgid: i32, marked: bool) -> Proc {
        Proc {
            pid,
            ppid,
            pgid,
            zombie: false,
            marked,
        }
    }

    #[test]
    fn an_execution_owns_its_group_its_marked_processes_and_their_children() {
        // 1 init, 10 actiond, 20 the execution's leader (group 20).
        let procs = [
            p(1, 0, 1, false),
            p(10, 1, 10, false),
            p(20, 10, 20, true),
            p(21, 20, 20, true),  // a child in the group
            p(30, 10, 30, true),  // `setsid`, orphaned onto actiond, still marked
            p(31, 30, 31, false), // its child after `env -i`: unmarked, parent belongs
            p(40, 10, 40, false), // an unmarked orphan: cannot be attributed
            p(50, 10, 50, false), // another execution's leader
            p(51, 50, 51, false), // …and its setsid child (marked with another id)
            p(60, 1, 20, true),   // not below actiond: never ours, even marked in group 20
            p(70, 61, 70, true),  // parent unknown (gone): not provably below actiond
        ];
        let mut got = attribute(&procs, 10, 20);
        got.sort_unstable();
        assert_eq!(got, [20, 21, 30, 31]);
        // actiond itself is never a member, even when its group is the one named.
        let unmarked: Vec<Proc> = procs
            .iter()
            .map(|p| Proc {
                marked: false,
                ..*p
            })
            .collect();
        assert_eq!(attribute(&unmarked, 10, 10), Vec::<i32>::new());
    }

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let line = "123 (a) b (c)) S 45 67 67 0 -1 4194560 0 0 0 0\n";
        assert_eq!(parse_stat(line), Some(p(123, 45, 67, false)));
        let zombie = "9 (sh) Z 1 9 9 0 -1 0\n";
        assert!(parse_stat(zombie).unwrap().zombie);
        assert_eq!(parse_stat("garbage"), None);
    }
}
