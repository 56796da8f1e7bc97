import { meterModule } from './meter.js';
import type { MeterReply, MeterRequest } from './metering.js';

/**
 * The metering process: binaryen runs here, never in the process that runs rules. It runs none
 * of a rule's code. It meters one module at a time and exits when its parent goes away.
 */
const send = (reply: MeterReply) => process.send!(reply);

process.on('message', (request: MeterRequest) => {
  try {
    send({ id: request.id, bytes: meterModule(request.bytes) });
  } catch (err) {
    send({ id: request.id, error: err instanceof Error ? err.message : String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
send({ ready: true });
