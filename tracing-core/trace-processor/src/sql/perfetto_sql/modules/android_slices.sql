-- Written for zerotrace: the `android.slices` module.
-- `android_standardize_slice_name(name)`: a slice name with the parts that
-- vary from one occurrence to the next (ids, numbers, file names, lock
-- owners, lambda suffixes of handler classes, vsync timings) taken out, so
-- that slices can be aggregated by what they are. Known shapes map to a
-- fixed name or a trimmed one; anything else keeps its text with numbers
-- and hex numbers of two digits or more replaced by `<num>`.

-- The text before the first `$` of `name` (a Java class without its
-- lambda or inner-class suffix), numbers stripped.
CREATE PERFETTO FUNCTION _remove_lambda_name(name STRING)
RETURNS STRING AS
SELECT __intrinsic_strip_hex(substr($name, 1, instr($name, '$') - 1), 2);

-- `Wakelock(epolld<id>:<owner>` (or epollm) without its id.
CREATE PERFETTO FUNCTION _standardize_wakelock_slice_name(name STRING)
RETURNS STRING AS
SELECT
  IIF(
    ($name GLOB 'Wakelock(epolld*' OR $name GLOB 'Wakelock(epollm*')
      AND instr($name, ':') > 0,
    substr($name, 1, length('Wakelock(epolld')) || '<...>'
      || substr($name, instr($name, ':')),
    __intrinsic_strip_hex($name, 2)
  );

-- Names that mention vsync, by their shape.
CREATE PERFETTO FUNCTION _standardize_vsync_slice_name(name STRING)
RETURNS STRING AS
SELECT
  CASE
    WHEN $name GLOB 'beginFrame*' THEN 'beginFrame <...>'
    WHEN $name GLOB 'frameIsEarly*' THEN 'frameIsEarly <...>'
    WHEN $name GLOB '*vsync*in*' THEN 'vsync in <...>'
    WHEN $name GLOB 'present for*vsyncIn*' THEN 'present for vsync in <...>'
    WHEN $name GLOB 'wait for earliest present time*'
      THEN 'wait for earliest present time <vsync>'
    WHEN $name GLOB 'present for Common Panel*' THEN 'present for Common Panel'
    WHEN $name GLOB 'frameTimelineInfo*' THEN 'frameTimelineInfo <...>'
    WHEN $name GLOB '*setFrameTimelineInfo*' THEN 'setFrameTimelineInfo <...>'
    WHEN $name GLOB '*AChoreographer_vsyncCallback*'
      THEN 'AChoreographer_vsyncCallback <...>'
    WHEN $name GLOB 'unsync-vsync-id=* isSfChoreo=false'
      THEN 'unsync-vsync-id=<...> isSfChoreo=false'
    WHEN $name GLOB 'unsync-vsync-id=* isSfChoreo=true'
      THEN 'unsync-vsync-id=<...> isSfChoreo=true'
    WHEN $name GLOB 'Discarding old vsync*' THEN 'Discarding old vsync'
    WHEN $name GLOB 'setDisplayModePtr*' THEN 'setDisplayModePtr'
    WHEN $name GLOB 'adjusting vsync by*' THEN 'adjusting vsync by <...>'
    WHEN $name GLOB 'Not-Adjusting vsync by*' THEN 'Not-Adjusting vsync by <...>'
    WHEN $name GLOB 'dropping stale frameNumber*' THEN 'dropping stale frameNumber <...>'
    WHEN $name GLOB 'Sensor event from com.google.sensor.camera_vsync*'
      THEN 'Sensor event from com.google.sensor.camera_vsync <...>'
    WHEN $name GLOB '*DisplayInfo*' THEN 'DisplayInfo <...>'
    WHEN $name GLOB 'Choreographer#onVsync*' THEN 'Choreographer#onVsync<...>'
    WHEN $name GLOB 'appSf alarm*;*VSYNC in*' THEN 'appSf alarm in <...>; vsync in <...>'
    WHEN $name GLOB 'sf alarm*;*VSYNC in*' THEN 'sf alarm in <...>; vsync in <...>'
    WHEN $name GLOB 'app alarm*;*VSYNC in*' THEN 'app alarm in <...>; vsync in <...>'
    WHEN $name GLOB 'FT#*' THEN 'FT#FrameTrackerEvent'
    WHEN $name GLOB '*isVsyncValid*' THEN 'isVsyncValid <...>'
    WHEN $name GLOB 'onHardwareVsyncRequest*' THEN 'onHardwareVsyncRequest <...>'
    WHEN $name GLOB 'onComposerHalVsync*' THEN 'onComposerHalVsync <...>'
    WHEN $name GLOB 'ensureMinFrameDurationIsKept*mNumVsyncsForFrame=*mPastExpectedPresentTimes.size()=*'
      THEN 'ensureMinFrameDurationIsKept mNumVsyncsForFrame=<...> mPastExpectedPresentTimes.size()=<...>'
    WHEN $name GLOB '*lastVsyncDelta*' THEN 'lastVsyncDelta=<...>'
    WHEN $name GLOB 'mLastCommittedVsync in*' THEN 'mLastCommittedVsync in <...>'
    ELSE __intrinsic_strip_hex($name, 2)
  END;

-- `name` standardized for aggregation (see the module's comment); the
-- first shape that matches decides.
CREATE PERFETTO FUNCTION android_standardize_slice_name(name STRING)
RETURNS STRING AS
SELECT
  CASE
    -- Fixed names for shapes with a variable tail.
    WHEN $name GLOB 'monitor contention with*' THEN 'monitor contention with <...>'
    WHEN $name GLOB 'SuspendThreadByThreadId*' THEN 'SuspendThreadByThreadId <...>'
    WHEN $name GLOB 'LoadApkAssetsFd*' THEN 'LoadApkAssetsFd <...>'
    WHEN $name GLOB 'relayoutWindow*' THEN 'relayoutWindow <...>'
    WHEN $name GLOB 'android.os.Handler: kotlinx.coroutines*' THEN 'CoroutineContinuation'
    WHEN $name GLOB 'Choreographer#doFrame*' THEN 'Choreographer#doFrame'
    WHEN $name GLOB 'DrawFrames*' THEN 'DrawFrames'
    -- `drawLayer [Node] 55.0 x 55.0`: up to the closing bracket.
    WHEN $name GLOB 'drawLayer [[]*[]]*' THEN substr($name, 1, instr($name, ']'))
    WHEN $name GLOB 'Texture upload*' THEN 'Texture upload'
    WHEN $name GLOB 'AssetManager::OpenNonAsset*' THEN 'AssetManager::OpenNonAsset <...>'
    WHEN $name GLOB 'AssetManager::OpenXmlAsset*' THEN 'AssetManager::OpenXmlAsset <...>'
    WHEN $name GLOB 'AssetManager::OpenAsset*' THEN 'AssetManager::OpenAsset <...>'
    WHEN $name GLOB '*AssetInputStream*' THEN 'AssetInputStream'
    WHEN $name GLOB 'openTypedAssetFile*' THEN 'openTypedAssetFile <...>'
    WHEN $name GLOB 'LoadApkAssets*' THEN 'LoadApkAssets <...>'
    WHEN $name GLOB '*AssetLoader:*' THEN 'AssetLoader: <...>'
    WHEN $name GLOB 'JIT compiling*' THEN 'JIT compiling'
    WHEN $name GLOB 'requested config :*' THEN 'requested config : <...>'
    WHEN $name GLOB '/data/app*.apk' THEN 'APK load'
    WHEN $name GLOB 'OpenDexFilesFromOat*' THEN 'OpenDexFilesFromOat'
    WHEN $name GLOB 'Open oat file*' THEN 'Open oat file'
    WHEN $name GLOB 'Open dex file*' THEN 'Open dex file'
    WHEN $name GLOB 'VdexFile*' THEN 'VdexFile'
    WHEN $name GLOB 'GC: Wait For*' THEN 'Garbage Collector'
    WHEN $name GLOB 'prepareDispatchCycleLocked*' THEN 'prepareDispatchCycleLocked <...>'
    WHEN $name GLOB 'enqueueDispatchEntryAndStartDispatchCycleLocked*'
      THEN 'enqueueDispatchEntryAndStartDispatchCycleLocked <...>'
    WHEN $name GLOB 'Layers: *' THEN 'Layers: <...>'
    -- `<id> SurfaceView[<activity>](BLAST)#<n>`: the SurfaceView part.
    WHEN $name GLOB '* SurfaceView*(BLAST)#*'
      THEN substr($name, instr($name, 'SurfaceView'),
                  instr($name, '#') - instr($name, 'SurfaceView'))
    WHEN $name GLOB 'uid=*' THEN 'uid = <...>'
    WHEN $name GLOB 'wakeupap=*' THEN 'wakeupap = <...>'
    WHEN $name GLOB 'launchingActivity#*' THEN 'launchingActivity#<...>'
    WHEN $name GLOB 'updateUidStateUL*' THEN 'updateUidStateUL <...>'
    WHEN $name GLOB 'Wakelock(epolld*' OR $name GLOB 'Wakelock(epollm*'
      THEN _standardize_wakelock_slice_name($name)
    WHEN $name GLOB 'cpuhp*' THEN 'cpuhp<...>'
    WHEN $name GLOB 'atc*' THEN 'atc<...>'
    WHEN $name GLOB '[0-9]* Alarm:*' THEN 'Alarm: <...>'
    WHEN $name GLOB '[0-9]* Wifi:*' THEN 'Wifi: <...>'
    WHEN $name GLOB '[0-9]* Sensor:*' THEN 'Sensor: <...>'
    WHEN $name GLOB '*Cellular_data*' THEN 'Cellular_data <...>'
    WHEN $name GLOB '*GET_ACTIVITY_INFO ModemActivityInfo*'
      THEN '<...>GET_ACTIVITY_INFO ModemActivityInfo <...>'
    WHEN $name GLOB 'UNSOL_SIGNAL_STRENGTH*' THEN 'UNSOL_SIGNAL_STRENGTH <...>'
    WHEN $name GLOB '*GET_CELL_INFO_LIST*' THEN '<...> GET_CELL_INFO_LIST <...>'
    WHEN $name GLOB '*VOICE_REGISTRATION_STATE*' THEN '<...> VOICE_REGISTRATION_STATE <...>'
    WHEN $name GLOB '*DATA_REGISTRATION_STATE*' THEN '<...> DATA_REGISTRATION_STATE <...>'
    WHEN $name GLOB 'InputConsumer processing on ClientState*'
      THEN 'InputConsumer processing on ClientState<...>'
    -- `Transaction (<name>, <id>)`: the id goes; a `Thread-<n>` name
    -- loses its number (the text from the comma on is kept as it is).
    WHEN $name GLOB 'Transaction (Thread-*, *)'
      THEN substr($name, 1, instr($name, '(')) || 'Thread-<...>,'
        || substr($name, instr($name, ','))
    WHEN $name GLOB 'Transaction (*, *)'
      THEN substr($name, 1, instr($name, ',') + 1) || '<...>)'
    -- `Lock contention on <lock> (owner tid: <n>)`: the owner goes.
    WHEN $name GLOB 'Lock contention on* (*'
      THEN substr($name, 1, instr($name, '(') - 1) || '<...>'
    -- Looper handlers: the handler's class without its lambda suffix.
    WHEN $name GLOB '*Handler: *$*'
      THEN _remove_lambda_name(substr($name, instr($name, 'Handler:')))
    WHEN $name GLOB '*.*.*: *$*' THEN 'Handler: ' || _remove_lambda_name($name)
    WHEN $name GLOB '*.*$*: #*' THEN 'Handler: ' || _remove_lambda_name($name)
    WHEN $name GLOB 'deliverInputEvent*' THEN 'deliverInputEvent <...>'
    WHEN lower($name) GLOB '*vsync*' THEN _standardize_vsync_slice_name($name)
    -- Stats pulls: the number is the atom's tag, kept.
    WHEN $name GLOB 'StatsPull-*' THEN $name
    ELSE __intrinsic_strip_hex($name, 2)
  END;
