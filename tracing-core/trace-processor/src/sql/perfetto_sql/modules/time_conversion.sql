-- time.conversion, written for zerotrace from the documented meaning of
-- its functions: timestamps and durations are integer nanoseconds; the
-- time_from_* functions scale a count of a unit up to nanoseconds, the
-- time_to_* ones divide nanoseconds down to whole units (truncating, as
-- integer division does).

CREATE PERFETTO FUNCTION time_from_ns(nanos LONG) RETURNS TIMESTAMP AS SELECT $nanos;
CREATE PERFETTO FUNCTION time_from_us(micros LONG) RETURNS TIMESTAMP AS SELECT $micros * 1000;
CREATE PERFETTO FUNCTION time_from_ms(millis LONG) RETURNS TIMESTAMP AS SELECT $millis * 1000000;
CREATE PERFETTO FUNCTION time_from_s(seconds LONG) RETURNS TIMESTAMP AS SELECT $seconds * 1000000000;
CREATE PERFETTO FUNCTION time_from_min(minutes LONG) RETURNS TIMESTAMP AS SELECT $minutes * 60000000000;
CREATE PERFETTO FUNCTION time_from_hours(hours LONG) RETURNS TIMESTAMP AS SELECT $hours * 3600000000000;
CREATE PERFETTO FUNCTION time_from_days(days LONG) RETURNS TIMESTAMP AS SELECT $days * 86400000000000;

CREATE PERFETTO FUNCTION time_to_ns(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos;
CREATE PERFETTO FUNCTION time_to_us(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos / 1000;
CREATE PERFETTO FUNCTION time_to_ms(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos / 1000000;
CREATE PERFETTO FUNCTION time_to_s(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos / 1000000000;
CREATE PERFETTO FUNCTION time_to_min(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos / 60000000000;
CREATE PERFETTO FUNCTION time_to_hours(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos / 3600000000000;
CREATE PERFETTO FUNCTION time_to_days(nanos TIMESTAMP) RETURNS LONG AS SELECT $nanos / 86400000000000;
