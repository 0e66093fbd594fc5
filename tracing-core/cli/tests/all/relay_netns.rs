//! Machines that are really apart: `zerotraced --enable-relay-endpoint` in
//! one network namespace, `zerotrace relay` in another, joined by a veth
//! pair, the relay in a time namespace of its own whose BOOTTIME and
//! MONOTONIC run 1000 s ahead. A producer of the relay's side (this test
//! process, through the relay's path socket: path sockets are shared
//! across namespaces, abstract ones are not) records into the central
//! service; its packets carry the machine id of the relay's hint, and the
//! relay's clock exchanges in the trace bracket the 1000 s offset within
//! the round trip.
//!
//! Needs root and `ip` and `unshare` (util-linux with time namespaces).
//! Where they are missing the test says so in one line and passes, unless
//! `ZEROTRACE_REQUIRE_NETNS` is set (CI sets it: there it must run). The
//! namespaces (and with them the veth pair) are deleted whatever happens.
//! Namespaces share one kernel and one boot id, hence the explicit hint.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use protozero::Decoder;
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::machine_id_from_hint;
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_protos::protos::{ClockSnapshotDecoder, RemoteClockSyncDecoder, TraceConfig};

const WAIT: Duration = Duration::from_secs(20);
const OFFSET_S: u64 = 1000;
const HINT: &str = "netns-vm";
const DS: &str = "zt.netns";
const PORT: u16 = 32278;

fn run(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Why the facility is missing, if it is.
fn missing() -> Option<String> {
    if rustix::process::geteuid().as_raw() != 0 {
        return Some("not root".into());
    }
    if !run(&["ip", "-V"]) {
        return Some("no `ip` command".into());
    }
    if !run(&["unshare", "--time", "--boottime", "1", "--fork", "true"]) {
        return Some("no time namespaces (`unshare --time`)".into());
    }
    None
}

/// Two network namespaces joined by a veth pair; deleted on drop.
struct Net {
    central: String,
    vm: String,
    central_ip: String,
}

impl Net {
    fn new() -> Net {
        let pid = std::process::id();
        let net = Net {
            central: format!("ztc-{pid}"),
            vm: format!("ztv-{pid}"),
            central_ip: format!("10.231.{}.1", pid % 250),
        };
        let vm_ip = format!("10.231.{}.2", pid % 250);
        let (a, b) = (format!("ztc{pid}"), format!("ztv{pid}"));
        let (a, b) = (&a[..a.len().min(15)], &b[..b.len().min(15)]);
        let steps: Vec<Vec<String>> = vec![
            vec!["ip", "netns", "add", &net.central],
            vec!["ip", "netns", "add", &net.vm],
            vec!["ip", "link", "add", a, "type", "veth", "peer", "name", b],
            vec!["ip", "link", "set", a, "netns", &net.central],
            vec!["ip", "link", "set", b, "netns", &net.vm],
            vec![
                "ip",
                "-n",
                &net.central,
                "addr",
                "add",
                &format!("{}/30", net.central_ip),
                "dev",
                a,
            ],
            vec![
                "ip",
                "-n",
                &net.vm,
                "addr",
                "add",
                &format!("{vm_ip}/30"),
                "dev",
                b,
            ],
            vec!["ip", "-n", &net.central, "link", "set", a, "up"],
            vec!["ip", "-n", &net.vm, "link", "set", b, "up"],
            vec!["ip", "-n", &net.central, "link", "set", "lo", "up"],
            vec!["ip", "-n", &net.vm, "link", "set", "lo", "up"],
        ]
        .into_iter()
        .map(|v| v.into_iter().map(str::to_owned).collect())
        .collect();
        for s in &steps {
            let args: Vec<&str> = s.iter().map(String::as_str).collect();
            assert!(run(&args), "network setup failed at {s:?}");
        }
        net
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and the pair.
        run(&["ip", "netns", "del", &self.central]);
        run(&["ip", "netns", "del", &self.vm]);
    }
}

/// A child process, killed and reaped on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_child(&self.0),
            rustix::process::Signal::TERM,
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_relay_in_other_namespaces_with_its_own_clocks() {
    if let Some(why) = missing() {
        assert!(
            std::env::var_os("ZEROTRACE_REQUIRE_NETNS").is_none(),
            "ZEROTRACE_REQUIRE_NETNS is set but the test cannot run: {why}"
        );
        eprintln!("relay_netns: skipped ({why})");
        return;
    }
    let dir = std::env::temp_dir().join(format!("zt-netns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let net = Net::new();
    let central_tcp = format!("{}:{PORT}", net.central_ip);
    let consumer_path = dir.join("central-consumer");
    let relay_path = dir.join("vm-producer");
    let _central = Proc(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &net.central,
                env!("CARGO_BIN_EXE_zerotraced"),
            ])
            .arg("--enable-relay-endpoint")
            .arg("--producer-socket")
            .arg(format!(
                "{},{central_tcp}",
                dir.join("central-producer").display()
            ))
            .arg("--consumer-socket")
            .arg(&consumer_path)
            .arg("--quiet")
            .spawn()
            .unwrap(),
    );
    wait_until("the central service", || {
        ConsumerClient::connect(&Endpoint::Path(consumer_path.clone())).is_ok()
    });
    let offset = OFFSET_S.to_string();
    let _relay = Proc(
        Command::new("ip")
            .args(["netns", "exec", &net.vm, "unshare", "--time"])
            .args(["--boottime", &offset, "--monotonic", &offset])
            .arg("--kill-child")
            .arg(env!("CARGO_BIN_EXE_zerotrace"))
            .args(["relay", "--relay-socket", &central_tcp, "--producer-socket"])
            .arg(&relay_path)
            .args(["--machine-id-hint", HINT, "--machine-name", "vm"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the relay's socket", || relay_path.exists());
    let producer = ProducerClient::start(
        &Endpoint::Path(relay_path.clone()),
        ProducerOptions {
            name: "vm-app".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: DS.into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    producer.wait_connected(WAIT).unwrap();
    // The relay's first clock round is done well within a second.
    std::thread::sleep(Duration::from_millis(500));

    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(1024);
        c.add_data_sources().begin_config().set_name(DS);
        c.set_trace_all_machines(true);
    }
    let mut consumer = ConsumerClient::connect(&Endpoint::Path(consumer_path.clone())).unwrap();
    let session = consumer.enable_tracing(&w.finish().unwrap(), None).unwrap();
    let instance = producer.wait_for_start(DS, WAIT).unwrap();
    let mut tw = producer.create_trace_writer_for(&instance).unwrap();
    for i in 0..20u64 {
        tw.packet(|p| {
            p.set_timestamp(i + 1);
        });
    }
    tw.flush(None);
    producer.flush_blocking(WAIT).unwrap();
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    let trace = consumer.read_trace().unwrap();

    let machine = machine_id_from_hint(HINT.as_bytes());
    let mut data = 0;
    let mut exchanges = Vec::new();
    for f in Decoder::new(&trace) {
        let p = f.unwrap().as_bytes().unwrap().to_vec();
        let m = Decoder::new(&p).find_last(98).map(|f| f.as_u32().unwrap());
        let ts = Decoder::new(&p).find_last(8).map(|f| f.as_u64().unwrap());
        if m == Some(machine) && ts.is_some_and(|t| t <= 20) {
            data += 1;
        }
        if let Some(raw) = Decoder::new(&p).find_last(107) {
            assert_eq!(m, Some(machine));
            let raw = raw.as_bytes().unwrap().to_vec();
            for e in RemoteClockSyncDecoder::new(&raw).synced_clocks() {
                exchanges.push((e.client_clocks(), e.host_clocks()).map_pair());
            }
        }
    }
    assert_eq!(data, 20, "every packet, stamped with the relay's machine");
    // PING (client t1, host h1) and UPDATE (client t2, host h2): h1 falls
    // between t1 and t2 on the client's clock, so the offset lies in
    // [t1 - h1, t2 - h1].
    assert!(exchanges.len() >= 2, "a clock round: {exchanges:?}");
    let off = OFFSET_S * 1_000_000_000;
    for clock_id in [6, 3] {
        let (c1, h1) = (exchanges[0].0[&clock_id], exchanges[0].1[&clock_id]);
        let c2 = exchanges[1].0[&clock_id];
        let (low, high) = (c1.wrapping_sub(h1), c2.wrapping_sub(h1));
        assert!(
            low <= off && off <= high,
            "clock {clock_id}: the offset {off} outside [{low}, {high}]"
        );
        assert!(high - low < 1_000_000_000, "a round trip under a second");
        eprintln!(
            "relay_netns: clock {clock_id}: offset {off} ns within [{low}, {high}] (a round trip of {} µs)",
            (high - low) / 1000
        );
    }
    drop(net);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The clocks of an exchange, by id.
type Clocks = std::collections::HashMap<u32, u64>;

trait MapPair {
    fn map_pair(self) -> (Clocks, Clocks);
}

impl MapPair
    for (
        Option<ClockSnapshotDecoder<'_>>,
        Option<ClockSnapshotDecoder<'_>>,
    )
{
    fn map_pair(self) -> (Clocks, Clocks) {
        let all = |s: Option<ClockSnapshotDecoder<'_>>| -> Clocks {
            s.map(|s| {
                s.clocks()
                    .filter_map(|c| Some((c.clock_id()?, c.timestamp()?)))
                    .collect()
            })
            .unwrap_or_default()
        };
        (all(self.0), all(self.1))
    }
}
