//! Joining a tracefs instance for one `linux.ftrace` session: the config
//! resolved against the kernel's events and capabilities (refused fields,
//! syscall filters, the clock and its fallback, the buffer-percent
//! watermark, the print filter, kernel symbols), the instance joined through
//! its [`Controller`], and what the session's [`Run`] reads from then on.
//! A piece of the probe in `ftrace.rs`, kept apart because it is the one
//! long step a start takes.

use super::*;

impl FtraceProbe {
    /// Resolves the config on this kernel and joins the instance.
    pub(super) fn setup(&self) -> Result<Run, String> {
        let root = match &self.source.tracefs {
            Some(r) => r.clone(),
            None => tracefs::find_or_mount().map_err(|e| e.to_string())?,
        };
        let instance = Instance::open(&root, self.options.instance_name.as_deref())
            .map_err(|e| e.to_string())?;
        let selection = self
            .options
            .resolve(&instance, &|_, name| has_typed_translation(name));
        // Refused config fields first: the trace's ftrace_stats name them.
        let mut failed: Vec<String> = self.options.refused.iter().map(|f| refusal(f)).collect();
        for f in &failed {
            self.log(f);
        }
        failed.extend(selection.failed.iter().cloned());
        let mut table = FormatTable::new();
        let mut events = BTreeSet::new();
        for (g, n) in &selection.events {
            let format = instance
                .format(g, n)
                .map_err(|e| e.to_string())
                .and_then(|t| EventFormat::parse(&t).map_err(|e| e.to_string()))
                .and_then(|f| table.insert(f).map_err(|e| e.to_string()));
            match format {
                Ok(()) => {
                    events.insert((g.clone(), n.clone()));
                }
                Err(e) => {
                    self.log(&format!("{g}/{n} left out: {e}"));
                    failed.push(format!("{g}/{n}"));
                }
            }
        }
        let header = instance
            .header_page()
            .map_err(|e| e.to_string())
            .and_then(|t| HeaderPage::parse(&t).map_err(|e| e.to_string()))?;
        let common = match table.common_type() {
            Some(c) => c.clone(),
            // No event of its own: the common header of `ftrace/print`,
            // which every kernel with tracefs has.
            None => {
                let text = instance
                    .format("ftrace", "print")
                    .map_err(|e| e.to_string())?;
                let f = EventFormat::parse(&text).map_err(|e| e.to_string())?;
                let mut t = FormatTable::new();
                t.insert(f).map_err(|e| e.to_string())?;
                t.common_type()
                    .cloned()
                    .ok_or("ftrace/print has no common_type")?
            }
        };
        let subbuf = instance.subbuf_size().map_err(|e| e.to_string())?;
        let layout = PageLayout::new(&header, subbuf, &common).map_err(|e| e.to_string())?;
        let mut translator = Translator::new(
            &table,
            Options {
                compact_sched: self.options.compact_sched,
            },
        )
        .map_err(|e| e.to_string())?;
        // For the process data source of the session (new processes).
        translator.collect_pids();
        if let Some(ids) = &selection.syscalls {
            translator.set_syscall_filter(&table, ids.clone());
        }
        if let Some(filter) = &self.options.print_filter {
            // print_filter reads ftrace/print's text: without that event's
            // format (not asked for) there is nothing to filter.
            if !translator.set_print_filter(&table, filter.clone())
                && table.formats().any(|f| f.name == "print")
            {
                failed.push(
                    "FtraceConfig.print_filter: ftrace/print has no text field here; not \
                     filtered"
                        .to_owned(),
                );
            }
        }
        let cpus = instance.cpus().map_err(|e| e.to_string())?;
        let wants = self.options.session_wants(
            &EventSelection {
                syscalls: selection.syscalls.clone(),
                events,
                ..EventSelection::default()
            },
            ram_bytes(&self.ctx),
        );
        let buffer_kb = wants.buffer_size_kb as usize;

        let key = self.options.instance_name.clone();
        let mut shared = lock(&self.source.shared);
        let session = shared.next_session;
        shared.next_session += 1;
        let reader = shared
            .instances
            .entry(key.clone())
            .or_insert_with(|| Reader {
                controller: Controller::new(instance.clone()),
                cpus: Vec::new(),
                buf: Vec::new(),
                cpu_buffer_bytes: 0,
                pending: BTreeMap::new(),
                raw_copy: self.source.raw_copy.clone(),
            });
        let report = match reader.controller.start(session, wants) {
            Ok(r) => r,
            Err(e) => {
                if reader.controller.sessions().is_idle() {
                    shared.instances.remove(&key);
                }
                return Err(e.to_string());
            }
        };
        failed.extend(report.failed_events);
        // Read back what the instance runs on (another session may have
        // set it, or the kernel lacks `boot`).
        let clock = reader
            .controller
            .sessions()
            .clock()
            .and_then(ftrace_clock_of);
        if reader.cpus.is_empty() {
            let mut readers = Vec::new();
            for &cpu in &cpus {
                match CpuReader::open(instance.dir(), cpu, subbuf) {
                    Ok(r) => readers.push(r),
                    Err(e) => {
                        let _ = reader.controller.stop(session);
                        if reader.controller.sessions().is_idle() {
                            shared.instances.remove(&key);
                        }
                        return Err(e.to_string());
                    }
                }
            }
            reader.cpus = readers;
            reader.buf = vec![0; subbuf.saturating_mul(READ_PAGES)];
            reader.cpu_buffer_bytes = buffer_kb.saturating_mul(1024);
        }
        reader.pending.insert(session, Vec::new());
        let watermark = match self.options.drain_buffer_percent {
            None => None,
            Some(_) => {
                let release = rustix::system::uname()
                    .release()
                    .to_string_lossy()
                    .into_owned();
                let why_not = if !watermark::poll_supported(&release) {
                    Some(format!(
                        "Linux {release} wakes no reader reliably at buffer_percent (6.9 does)"
                    ))
                } else if !instance.dir().join("buffer_percent").exists() {
                    Some("this kernel has no buffer_percent".to_owned())
                } else {
                    None
                };
                match why_not {
                    None => {
                        let fds: Result<Vec<_>, _> =
                            reader.cpus.iter().map(|c| c.watch_fd()).collect();
                        match fds.and_then(|fds| Watermark::start(fds, self.ctx.wake.clone())) {
                            Ok(w) => Some(w),
                            Err(e) => {
                                failed.push(format!(
                                    "FtraceConfig.drain_buffer_percent: cannot watch the buffers \
                                     ({e}); read every drain period only"
                                ));
                                None
                            }
                        }
                    }
                    Some(why) => {
                        failed.push(format!(
                            "FtraceConfig.drain_buffer_percent: {why}; read every drain period \
                             only"
                        ));
                        None
                    }
                }
            }
        };
        Ok(Run {
            key,
            session,
            instance,
            layout,
            translator,
            unknown: selection.unknown,
            failed,
            cpus,
            ksyms: None,
            clock,
            watermark,
        })
    }
}
