//! Progress on a stderr that is not a terminal (CI logs, `2> file`), where the indicatif bars
//! are hidden: a plain line every few seconds.

/// Seconds between plain-text progress lines.
pub const PLAIN_PROGRESS_SECS: u64 = 30;

/// Progress for a stderr that is not a terminal: `summaries: 1200/34214 functions (4 %), 60 s`.
pub struct PlainProgress {
    what: &'static str,
    /// What is counted (`functions`).
    unit: &'static str,
    start: std::time::Instant,
    last: std::time::Instant,
    done: u64,
    total: u64,
}

impl PlainProgress {
    pub fn new(what: &'static str, unit: &'static str, total: u64) -> Self {
        let now = std::time::Instant::now();
        PlainProgress {
            what,
            unit,
            start: now,
            last: now,
            done: 0,
            total,
        }
    }

    pub fn advance(&mut self, n: u64) {
        self.done += n;
        self.tick("");
    }

    /// Whether the next [`PlainProgress::tick`] prints.
    fn due(&self) -> bool {
        self.last.elapsed().as_secs() >= PLAIN_PROGRESS_SECS
    }

    /// Prints the line if it is time, with `detail` appended (what is still running: a long
    /// step completes nothing for minutes, and a silent log looks hung).
    pub fn tick(&mut self, detail: &str) {
        if self.due() {
            self.last = std::time::Instant::now();
            eprintln!(
                "{}: {}/{} {} ({} %), {} s{detail}",
                self.what,
                self.done,
                self.total,
                self.unit,
                100 * self.done / self.total.max(1),
                self.start.elapsed().as_secs()
            );
        }
    }
}

/// A progress bar on a terminal stderr (`prefix [elapsed] bar pos/len unit msg`), hidden when
/// `on` is false or stderr is not a terminal (then [`PlainProgress`] prints lines instead).
pub fn bar(on: bool, prefix: &'static str, unit: &str, total: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !on || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} {{msg}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix(prefix);
    bar
}

/// Progress of a stage counted in pieces of work, from any thread: a bar on a terminal, a line
/// every [`PLAIN_PROGRESS_SECS`] off one, nothing when off.
pub struct Progress {
    bar: indicatif::ProgressBar,
    plain: Option<std::sync::Mutex<PlainProgress>>,
}

impl Progress {
    pub fn new(on: bool, what: &'static str, unit: &'static str, total: u64) -> Progress {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        Progress {
            bar: bar(on && total > 0, what, unit, total),
            plain: (on && !terminal)
                .then(|| std::sync::Mutex::new(PlainProgress::new(what, unit, total))),
        }
    }

    pub fn advance(&self, n: u64) {
        self.bar.inc(n);
        self.with_plain(|p| p.advance(n));
    }

    /// [`Progress::advance`], with `detail` (made only when shown) after the count.
    pub fn advance_with(&self, n: u64, detail: impl Fn() -> String) {
        self.bar.inc(n);
        if !self.bar.is_hidden() {
            self.bar.set_message(detail());
        }
        self.with_plain(|p| {
            p.done += n;
            if p.due() {
                p.tick(&detail());
            }
        });
    }

    /// Nothing done, but a line is due off a terminal: `detail` says what is still running.
    pub fn tick(&self, detail: &str) {
        self.with_plain(|p| p.tick(detail));
    }

    /// The bar's message (a terminal only).
    pub fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    fn with_plain(&self, f: impl FnOnce(&mut PlainProgress)) {
        if let Some(p) = &self.plain {
            if let Ok(mut p) = p.lock() {
                f(&mut p);
            }
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Progress of a stage that counts nothing (linking, points-to, the call graph, thread entries):
/// a spinner with the elapsed time on a terminal, a line every [`PLAIN_PROGRESS_SECS`] off one,
/// from a thread of its own until dropped. Off, it is nothing.
pub struct Heartbeat {
    stop: Option<crossbeam_channel::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    pub fn start(on: bool, what: &'static str) -> Heartbeat {
        use std::io::IsTerminal;
        if !on {
            return Heartbeat {
                stop: None,
                thread: None,
            };
        }
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let terminal = std::io::stderr().is_terminal();
        let thread = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let spinner = terminal.then(|| {
                let s = indicatif::ProgressBar::new_spinner();
                s.set_prefix(what);
                s.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{prefix} [{elapsed_precise}] {spinner}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
                s.enable_steady_tick(std::time::Duration::from_millis(200));
                s
            });
            let every = std::time::Duration::from_secs(PLAIN_PROGRESS_SECS);
            while let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(every)
            {
                if spinner.is_none() {
                    eprintln!("{what}: running, {} s", start.elapsed().as_secs());
                }
            }
            if let Some(s) = spinner {
                s.finish_and_clear();
            }
        });
        Heartbeat {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread (disconnected).
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
