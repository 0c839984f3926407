//! The `actiond` command: parse the command line, load and validate the config, set up
//! logging, bind the listener, and run until SIGTERM or SIGINT. Everything else lives in the
//! library; this file only maps startup failures to exit codes (2: bad config or usage,
//! 1: could not start). What the command line prints goes through `console`, so a reader
//! that stops early (`| head -1`) ends it quietly.

#[cfg(any(target_env = "musl", test))]
mod allocator;
mod cli;
mod console;
mod notify;

use std::process::ExitCode;
use std::sync::Arc;

use actiond::config::{self, LogLevel, Source};
use console::Console;
use tracing::{error, info};

/// The static musl build allocates with dlmalloc (why: Cargo.toml, beside the dependency),
/// behind a lock of std's (`allocator`).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

fn main() -> ExitCode {
    let mut console = Console::new();
    let code = match cli::parse(std::env::args_os().skip(1)) {
        Err(e) => {
            console.err.line(&format!("actiond: {e}\n\n{}", cli::USAGE));
            ExitCode::from(2)
        }
        Ok(cli::Command::Help) => {
            console.out.line(cli::USAGE);
            ExitCode::SUCCESS
        }
        Ok(cli::Command::Version) => {
            console
                .out
                .line(&format!("actiond {}", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        Ok(cli::Command::HashPassword) => hash_password(&mut console),
        Ok(cli::Command::GenToken) => gen_token(&mut console),
        Ok(cli::Command::CheckConfig(path)) => check(&mut console, &Source::File(path)),
        Ok(cli::Command::Serve { config, listen }) => {
            return serve(console, config::locate(config.as_deref()), listen);
        }
    };
    console.finish(code)
}

/// `--check-config`: every warning and every error with its YAML path; exit 0 when nothing
/// is wrong, 2 when something is, be it an error that refuses the file or one that only
/// disables an action (the service would start without that action).
fn check(console: &mut Console, source: &Source) -> ExitCode {
    // A valid config is reported on stdout, an invalid one (warnings included) on stderr.
    let mut say = |valid: bool, line: &str| {
        if valid {
            console.out.line(line);
        } else {
            console.err.line(line);
        }
    };
    fn warn_all(say: &mut dyn FnMut(bool, &str), valid: bool, warnings: &[config::Problem]) {
        for w in warnings {
            say(valid, &format!("warning: {w}"));
        }
        if !warnings.is_empty() {
            say(valid, &format!("({})", config::MIGRATION_POINTER));
        }
    }
    match config::load(source) {
        Ok(loaded) => {
            let n = loaded.config.actions.len();
            let actions = if n == 1 { "action" } else { "actions" };
            let errors = loaded.config.action_errors();
            let valid = errors.is_empty();
            warn_all(&mut say, valid, &loaded.warnings);
            if valid {
                say(true, &format!("{source}: valid ({n} {actions})"));
                files(&loaded.config, |line| say(true, line));
                return ExitCode::SUCCESS;
            }
            for e in &errors {
                say(false, &format!("error: {e}"));
            }
            let disabled = loaded.config.disabled_actions().count();
            let (noun, verb) = if errors.len() == 1 {
                ("error", "disables")
            } else {
                ("errors", "disable")
            };
            say(
                false,
                &format!(
                    "{source}: {} {noun} {verb} {disabled} of {n} {actions}: actiond starts, \
                     and those never run until fixed",
                    errors.len(),
                ),
            );
            files(&loaded.config, |line| say(false, line));
            ExitCode::from(2)
        }
        Err(e) => {
            if let config::LoadError::Invalid { warnings, .. } = &e {
                warn_all(&mut say, false, warnings);
            }
            say(false, &format!("{source}: {e}"));
            ExitCode::from(2)
        }
    }
}

/// For a config read from more than one file (a board, overlays, includes): every file in
/// the order its settings apply, with the ids of the actions written in it.
fn files(config: &config::Config, mut say: impl FnMut(&str)) {
    if config.files.len() < 2 {
        return;
    }
    let by_file = config.actions_by_file();
    for file in &config.files {
        let ids = by_file
            .iter()
            .find(|(f, _)| std::ptr::eq(*f, file))
            .map_or_else(|| "no actions".to_string(), |(_, ids)| ids.join(", "));
        say(&format!("  {} ({}): {ids}", file.name, file.role.as_str()));
    }
}

/// `actiond hash-password`: one line of stdin in, its argon2id PHC string out (exit 0); an
/// empty or unreadable password exits 2, a hashing failure 1.
fn hash_password(console: &mut Console) -> ExitCode {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    // Held until the end: the password typed on a terminal is not shown.
    let _quiet = if stdin.is_terminal() {
        let Ok(guard) = EchoOff::on(&stdin).inspect_err(|e| {
            // Refuse rather than show the password to whoever looks at the screen.
            console.err.line(&format!(
                "actiond: cannot turn off the terminal's echo ({e}); pipe the password in"
            ));
        }) else {
            return ExitCode::FAILURE;
        };
        // On stderr, so that `actiond hash-password > file` captures only the hash.
        console.err.text("password: ");
        Some(guard)
    } else {
        None
    };
    let password = match cli::read_password(&mut stdin.lock()) {
        Ok(p) => p,
        Err(e) => {
            console.err.line(&format!("actiond: {e}"));
            return ExitCode::from(2);
        }
    };
    match actiond::auth::password::hash(&password) {
        Ok(phc) => {
            console.out.line(&phc);
            ExitCode::SUCCESS
        }
        Err(e) => {
            console.err.line(&format!("actiond: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// The terminal's echo turned off for as long as this lives, as `passwd` does: the password
/// typed is not shown, the Enter that ends it still is (ECHONL), so the hash starts on a line of
/// its own. Dropping it restores the settings found. A Ctrl-C kills the process with echo still
/// off; bash and zsh restore their terminal after a job killed by a signal.
struct EchoOff {
    saved: nix::sys::termios::Termios,
}

impl EchoOff {
    fn on(stdin: &std::io::Stdin) -> nix::Result<EchoOff> {
        use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
        let saved = tcgetattr(stdin)?;
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        quiet.local_flags.insert(LocalFlags::ECHONL);
        // TCSAFLUSH drops anything typed before the prompt, which would have been echoed.
        tcsetattr(stdin, SetArg::TCSAFLUSH, &quiet)?;
        Ok(EchoOff { saved })
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        use nix::sys::termios::{SetArg, tcsetattr};
        let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, &self.saved);
    }
}

/// `actiond gen-token`: a fresh API token and the config entry holding its SHA-256.
fn gen_token(console: &mut Console) -> ExitCode {
    match actiond::auth::token::generate() {
        Ok(token) => {
            let sha256 = actiond::auth::token::sha256_hex(&token);
            console.out.text(&cli::gen_token_text(&token, &sha256));
            ExitCode::SUCCESS
        }
        Err(e) => {
            console.err.line(&format!("actiond: {e}"));
            ExitCode::FAILURE
        }
    }
}

fn serve(mut console: Console, source: Source, listen: Option<String>) -> ExitCode {
    let loaded = match config::load(&source) {
        Ok(l) => l,
        Err(e) => {
            console
                .err
                .line(&format!("actiond: cannot use {source}: {e}"));
            return console.finish(ExitCode::from(2));
        }
    };
    // From here on, `tracing` writes stderr (and ignores a gone reader).
    drop(console);
    init_logging(loaded.config.log_level);
    info!("actiond {} using {source}", env!("CARGO_PKG_VERSION"));
    actiond::log_loaded(&loaded);
    let config = Arc::new(loaded.config);
    info!(
        "{}",
        config::describe_run_as(config.run_as.as_deref(), config.actions_user.as_deref())
    );
    if config.state_directory.is_none() {
        info!("no stateDirectory: the history is kept in memory only");
    }
    let address = listen.unwrap_or_else(|| config.listen_address.clone());
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        // The blocking pool starts processes (executor::run). Four spawns under way keep
        // a small board's cores busy; each thread costs stack and a malloc arena.
        .max_blocking_threads(4)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            error!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        // Before anything says "listening": a SIGTERM sent the moment the service is ready
        // must stop it in order, not kill it by the signal's default action.
        let stop_requested = stop_signal();
        let listener = bind_listener(&address)
            .await
            .map_err(|e| format!("cannot listen on {address}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        // Said once the history is restored: the port is bound before, and connections
        // wait in its queue until then.
        let systemd = std::rc::Rc::new(std::cell::Cell::new(None));
        let ready = {
            let systemd = std::rc::Rc::clone(&systemd);
            move || {
                info!("listening on http://{bound}");
                let status = format!("listening on http://{bound}");
                systemd.set(Some(notify::Systemd::ready(&status)));
            }
        };
        let stop = async move {
            stop_requested.await;
            if let Some(systemd) = systemd.take() {
                systemd.stopping();
            }
        };
        actiond::run(config, listener, ready, stop)
            .await
            .map_err(|e| e.to_string())
    });
    // Executions are stopped and recorded by now. What may still run on the blocking pool
    // is a config being loaded or a file being read for a reload that will never apply:
    // dropping the runtime would wait for it (a config of thousands of actions takes
    // seconds on a small board), and a stop must be prompt.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// How long a stop waits for work left on the blocking pool (see `serve`).
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Connections beyond `maxConnections` wait in the kernel's queue; tokio's default of 128
/// would make a larger burst drop its connects and retry.
const BACKLOG: u32 = 1024;

/// Binds `address` (host:port, a name is resolved) with a long listen queue.
async fn bind_listener(address: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "the address resolves to nothing",
    );
    for addr in tokio::net::lookup_host(address).await? {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        // A restarted service must not wait for the old connections' TIME_WAIT to end.
        socket.set_reuseaddr(true)?;
        match socket.bind(addr).and_then(|()| socket.listen(BACKLOG)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Takes over SIGTERM and SIGINT at once (call it inside the runtime) and returns a future
/// that resolves on the first of them.
fn stop_signal() -> impl Future<Output = ()> {
    use actiond::signal;
    use tokio::signal::unix::SignalKind;
    let streams = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    );
    async move {
        let (Ok(mut term), Ok(mut int)) = streams else {
            error!("cannot listen for SIGTERM/SIGINT; stop actiond with SIGKILL");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => info!("SIGTERM received"),
            _ = int.recv() => info!("SIGINT received"),
        }
    }
}

fn init_logging(level: LogLevel) {
    let level = match level {
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
        LogLevel::Trace => tracing::Level::TRACE,
    };
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        // Its own complaint about a failed write goes through `eprintln!`, which panics when
        // stderr's reader has gone (`actiond 2>&1 | head -1`): a log line is lost instead.
        .log_internal_errors(false);
    // journald stamps every line itself.
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        builder.without_time().init();
    } else {
        builder.init();
    }
}
