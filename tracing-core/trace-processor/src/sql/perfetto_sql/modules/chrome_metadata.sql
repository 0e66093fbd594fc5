-- Written for zerotrace: the `chrome.metadata` module.
-- `chrome_hardware_class()`: the device's hardware class as Chrome
-- recorded it (metadata `cr-hardware-class`), NULL when absent.

CREATE PERFETTO FUNCTION chrome_hardware_class()
RETURNS STRING
AS
SELECT str_value FROM metadata WHERE name = 'cr-hardware-class';
