//! The consumer client: starts and controls a tracing session on a service
//! (ours or Perfetto's `traced`) and reads the trace back, as Perfetto's
//! `perfetto` command and SDK do.

use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_protos::protos::{
    AttachResponseDecoder, EnableTracingResponseDecoder, GetTraceStatsResponseDecoder,
    ObserveEventsResponseDecoder, QueryServiceStateResponseDecoder, ReadBuffersResponseDecoder,
};

use crate::ipc::channel::{Channel, ChannelError};
use crate::ipc::socket::{Endpoint, connect};

/// How a session ended, as the EnableTracing reply says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEnd {
    /// The session ran and stopped.
    Disabled,
    /// The service refused or aborted it.
    Error(String),
}

/// The pending answer to EnableTracing (it comes when the session ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnableRequest(pub u64);

/// A consumer connection.
#[derive(Debug)]
pub struct ConsumerClient {
    ch: Channel,
    timeout: Duration,
}

fn encode(f: impl FnOnce(protozero::Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(w.root());
    w.finish().unwrap_or_default()
}

impl ConsumerClient {
    /// Connects and binds ConsumerPort (one attempt, as Perfetto's consumers do).
    pub fn connect(endpoint: &Endpoint) -> Result<ConsumerClient, ChannelError> {
        let stream = connect(endpoint)?;
        let timeout = Duration::from_secs(30);
        Ok(ConsumerClient {
            ch: Channel::bind(stream, "ConsumerPort", timeout)?,
            timeout,
        })
    }

    /// Starts a session with the encoded `config`; `output` is the file a
    /// `write_into_file` session writes into (passed to the service; only
    /// unix sockets can pass it, and on Windows, which has none, asking to
    /// is an [`std::io::ErrorKind::Unsupported`] error).
    pub fn enable_tracing(
        &mut self,
        config: &[u8],
        output: Option<&std::fs::File>,
    ) -> Result<EnableRequest, ChannelError> {
        #[cfg(unix)]
        let output = output.map(std::os::fd::AsFd::as_fd);
        #[cfg(not(unix))]
        let output = match output {
            Some(_) => {
                return Err(crate::ipc::socket::unsupported(
                    "output files passed to a service",
                    "unix",
                )
                .into());
            }
            None => None,
        };
        let args = encode(|mut m| m.append_bytes(1, config));
        let id = self.ch.call_with_fd("EnableTracing", args, false, output)?;
        Ok(EnableRequest(id))
    }

    /// Waits for the session to end (`timeout` `None`: forever).
    pub fn wait_for_end(
        &mut self,
        req: EnableRequest,
        timeout: Option<Duration>,
    ) -> Result<SessionEnd, ChannelError> {
        let r = self.ch.next_reply(req.0, timeout)?;
        Ok(end_of(&r.data, r.success))
    }

    /// The session's end, if it has come (waiting at most `wait`).
    pub fn poll_end(
        &mut self,
        req: EnableRequest,
        wait: Duration,
    ) -> Result<Option<SessionEnd>, ChannelError> {
        Ok(self
            .ch
            .poll_reply(req.0, wait)?
            .map(|r| end_of(&r.data, r.success)))
    }

    /// Starts a `deferred_start` session.
    pub fn start_tracing(&mut self) -> Result<(), ChannelError> {
        self.ch
            .call_and_wait("StartTracing", Vec::new(), self.timeout)
            .map(drop)
    }

    /// Stops the session.
    pub fn disable_tracing(&mut self) -> Result<(), ChannelError> {
        self.ch
            .call_and_wait("DisableTracing", Vec::new(), self.timeout)
            .map(drop)
    }

    /// Asks every data source to flush; `Ok(false)` if it timed out.
    pub fn flush(&mut self, timeout_ms: u32) -> Result<bool, ChannelError> {
        let args = encode(|mut m| m.append_uint32(1, timeout_ms));
        match self.ch.call_and_wait(
            "Flush",
            args,
            self.timeout + Duration::from_millis(timeout_ms as u64),
        ) {
            Ok(_) => Ok(true),
            Err(ChannelError::Rejected(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Reads the session's buffers, handing each whole packet to `f`.
    pub fn read_buffers(&mut self, mut f: impl FnMut(&[u8])) -> Result<(), ChannelError> {
        let id = self.ch.call("ReadBuffers", Vec::new(), false)?;
        let mut partial = Vec::new();
        loop {
            let r = self.ch.next_reply(id, Some(self.timeout))?;
            if !r.success {
                return Err(ChannelError::Rejected("ReadBuffers"));
            }
            for s in ReadBuffersResponseDecoder::new(&r.data).slices() {
                partial.extend_from_slice(s.data().unwrap_or(&[]));
                if s.last_slice_for_packet().unwrap_or(false) {
                    f(&partial);
                    partial.clear();
                }
            }
            if !r.has_more {
                return Ok(());
            }
        }
    }

    /// Reads the session's buffers as trace file bytes.
    pub fn read_trace(&mut self) -> Result<Vec<u8>, ChannelError> {
        let mut out = Vec::new();
        self.read_buffers(|p| {
            out.push(0x0A);
            let mut n = p.len() as u64;
            while n >= 0x80 {
                out.push(n as u8 | 0x80);
                n >>= 7;
            }
            out.push(n as u8);
            out.extend_from_slice(p);
        })?;
        Ok(out)
    }

    /// Frees the session's buffers (ending the session).
    pub fn free_buffers(&mut self) -> Result<(), ChannelError> {
        self.ch
            .call_and_wait("FreeBuffers", Vec::new(), self.timeout)
            .map(drop)
    }

    /// Detaches the session under `key`; it goes on without this consumer.
    pub fn detach(&mut self, key: &str) -> Result<(), ChannelError> {
        let args = encode(|mut m| m.append_string(1, key));
        self.ch
            .call_and_wait("Detach", args, self.timeout)
            .map(drop)
    }

    /// Attaches to the session detached under `key`; returns its config.
    pub fn attach(&mut self, key: &str) -> Result<Vec<u8>, ChannelError> {
        let args = encode(|mut m| m.append_string(1, key));
        let r = self.ch.call_and_wait("Attach", args, self.timeout)?;
        Ok(AttachResponseDecoder::new(&r)
            .trace_config_bytes()
            .unwrap_or(&[])
            .to_vec())
    }

    /// Asks for the end-of-session notification of an attached session.
    pub fn enable_attach_notification(&mut self) -> Result<EnableRequest, ChannelError> {
        let args = encode(|mut m| m.append_bool(2, true));
        Ok(EnableRequest(self.ch.call("EnableTracing", args, false)?))
    }

    /// The session's `TraceStats`, encoded.
    pub fn trace_stats(&mut self) -> Result<Vec<u8>, ChannelError> {
        let r = self
            .ch
            .call_and_wait("GetTraceStats", Vec::new(), self.timeout)?;
        Ok(GetTraceStatsResponseDecoder::new(&r)
            .trace_stats_bytes()
            .unwrap_or(&[])
            .to_vec())
    }

    /// The service's `TracingServiceState`, encoded (all replies joined).
    pub fn query_service_state(&mut self) -> Result<Vec<u8>, ChannelError> {
        let id = self.ch.call("QueryServiceState", Vec::new(), false)?;
        let mut state = Vec::new();
        loop {
            let r = self.ch.next_reply(id, Some(self.timeout))?;
            if !r.success {
                return Err(ChannelError::Rejected("QueryServiceState"));
            }
            state.extend_from_slice(
                QueryServiceStateResponseDecoder::new(&r.data)
                    .service_state_bytes()
                    .unwrap_or(&[]),
            );
            if !r.has_more {
                return Ok(state);
            }
        }
    }

    /// The service's capabilities (`QueryCapabilitiesResponse`), encoded.
    pub fn query_capabilities(&mut self) -> Result<Vec<u8>, ChannelError> {
        self.ch
            .call_and_wait("QueryCapabilities", Vec::new(), self.timeout)
    }

    /// Subscribes to `ObservableEvents.Type`s; events come with [`next_events`](Self::next_events).
    pub fn observe_events(&mut self, types: &[i32]) -> Result<u64, ChannelError> {
        let args = encode(|mut m| {
            for t in types {
                m.append_int32(1, *t);
            }
        });
        self.ch.call("ObserveEvents", args, false)
    }

    /// The next `ObservableEvents` (encoded) of subscription `id`.
    pub fn next_events(&mut self, id: u64, timeout: Duration) -> Result<Vec<u8>, ChannelError> {
        let r = self.ch.next_reply(id, Some(timeout))?;
        Ok(ObserveEventsResponseDecoder::new(&r.data)
            .events_bytes()
            .unwrap_or(&[])
            .to_vec())
    }

    /// Clones session `session_id` (or the one named `unique_name`) into a
    /// read-only snapshot this consumer then reads.
    pub fn clone_session(
        &mut self,
        session_id: Option<u64>,
        unique_name: Option<&str>,
    ) -> Result<Vec<u8>, ChannelError> {
        let args = encode(|mut m| {
            if let Some(id) = session_id {
                m.append_uint64(1, id);
            }
            if let Some(n) = unique_name {
                m.append_string(4, n);
            }
        });
        self.ch.call_and_wait("CloneSession", args, self.timeout)
    }

    /// The underlying channel, for calls not wrapped here.
    pub fn channel(&mut self) -> &mut Channel {
        &mut self.ch
    }
}

fn end_of(data: &[u8], success: bool) -> SessionEnd {
    if !success {
        return SessionEnd::Error("EnableTracing was rejected".into());
    }
    let d = EnableTracingResponseDecoder::new(data);
    match d.error() {
        Some(e) if !e.is_empty() => SessionEnd::Error(e.to_owned()),
        _ => SessionEnd::Disabled,
    }
}
