//! The files with a data ending (or any ending) that a program other than the command runs
//! commands from, or loads as its settings, by their name alone, wherever they are: build and
//! package tools' files (`package.json`'s scripts, `package-lock.json`'s tarballs,
//! `nodemon.json`'s `exec`), Node-RED's flows, homebridge's config, and the Pi firmware's
//! `config.txt` and `cmdline.txt` in any boot tree (a netboot server's, a mounted SD card's).
//! For `filed::by_convention`, which lowers the name first: the list is matched in any case
//! (`PACKAGE.JSON` on a FAT stick is `package.json`). Pure: it reads names, never files; it
//! must not list endings or directories (`by_convention` does).

/// Whether `name` (lowered; `file` its last segment) is a file some program runs commands
/// from or loads as code by its name.
pub(super) fn by_name(name: &[u8], file: &[u8]) -> bool {
    // `npm` runs a `package.json`'s scripts and fetches the tarballs a lock file names
    // (their install scripts run), `nodemon` its `exec`, deno its `tasks`, nx a
    // `project.json`'s `run-commands`, composer its scripts, `pip -r` a requirements list,
    // `cmake` its lists, `make` its makefile, pm2 its ecosystem file.
    const BUILD: &[&[u8]] = &[
        b"package.json",
        b"package-lock.json",
        b"npm-shrinkwrap.json",
        b"nodemon.json",
        b"deno.json",
        b"deno.jsonc",
        b"project.json",
        b"composer.json",
        b"composer.lock",
        b"ecosystem.json",
        b"cmakelists.txt",
        b"requirements.txt",
        b"constraints.txt",
        b"makefile",
        b"gnumakefile",
        // Node-RED's flows (an `exec` node runs a command): `flows.json`, and the
        // `flows_<host>.json` older versions name them.
        b"flows.json",
        // A Pi's firmware reads these from any boot partition or netboot tree (`init=`,
        // `dtoverlay=`), not only `/boot`: a mounted SD card's, a TFTP server's.
        b"config.txt",
        b"cmdline.txt",
    ];
    BUILD.contains(&file)
        || (file.starts_with(b"flows_") && file.ends_with(b".json"))
        // homebridge's `config.json` (its plugins run commands: `cmd` accessories), wherever
        // it keeps it (`/var/lib/homebridge`, `~/.homebridge`, `/srv/homebridge`).
        || (file == b"config.json" && name.windows(10).any(|w| w == b"homebridge"))
}
