//! Progress for steps that can take more than a few seconds (cargo builds, ptxas, test runs).
//!
//! On a terminal (stderr is a TTY and `TERM` is not `dumb`): an indicatif spinner with the step's label, a
//! detail message (e.g. cargo's latest `Compiling x` line) and the elapsed time; when the step ends the spinner
//! is replaced by one line `xtask: <label>: <outcome> (<duration>)`.
//! Otherwise (CI logs, pipes): a plain line when the step starts and the same closing line when it ends, so a
//! log shows what ran and how long it took without spinner noise.
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Is stderr an interactive terminal (spinners), or a log (plain lines)?
pub fn interactive() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// One running step. Dropping it without [`Step::finish`] clears the spinner and reports the step as stopped.
pub struct Step {
    label: String,
    start: Instant,
    bar: Option<ProgressBar>,
    done: bool,
}

impl Step {
    /// Start a step: a spinner on a terminal, else the line `xtask: <label> ...`.
    pub fn start(label: impl Into<String>) -> Step {
        let label = label.into();
        let bar = if interactive() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner:.cyan} xtask: {prefix} [{elapsed}] {wide_msg:.dim}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(label.clone());
            bar.enable_steady_tick(Duration::from_millis(120));
            Some(bar)
        } else {
            eprintln!("xtask: {label} ...");
            None
        };
        Step { label, start: Instant::now(), bar, done: false }
    }

    /// The spinner's detail text (e.g. `Compiling zkgpu`); nothing in plain mode.
    pub fn set_message(&self, message: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.into());
        }
    }

    /// Print a line to stderr without tearing the spinner.
    pub fn eprintln(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Print a line to stdout without tearing the spinner.
    pub fn println(&self, line: &str) {
        use std::io::Write;
        let write = || {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// End the step with `outcome` (e.g. `done`, `4 modules from the cache`): `xtask: <label>: <outcome> (1.2 s)`.
    pub fn finish(mut self, outcome: &str) {
        self.close(outcome);
    }

    fn close(&mut self, outcome: &str) {
        if self.done {
            return;
        }
        self.done = true;
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        eprintln!("xtask: {}: {outcome} ({})", self.label, format_duration(self.start.elapsed()));
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        self.close("stopped");
    }
}

/// Run `f` as a step labelled `label`: its outcome line says `done` or `FAILED`, with the duration.
pub fn step<T, E>(label: impl Into<String>, f: impl FnOnce(&Step) -> Result<T, E>) -> Result<T, E> {
    let step = Step::start(label);
    let result = f(&step);
    step.finish(if result.is_ok() { "done" } else { "FAILED" });
    result
}

/// `0.4 s`, `12.3 s`, `3 min 07 s`, `1 h 02 min`.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else if secs < 3600.0 {
        let s = secs.round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = (secs / 60.0).round() as u64;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::format_duration;
    use std::time::Duration;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(420)), "0.4 s");
        assert_eq!(format_duration(Duration::from_secs_f64(12.34)), "12.3 s");
        assert_eq!(format_duration(Duration::from_secs(187)), "3 min 07 s");
        assert_eq!(format_duration(Duration::from_secs(3720)), "1 h 02 min");
    }
}
