// Preloaded (`node --import`) into a server process by the crash tests: the process kills itself
// with SIGKILL at the moment it would write the 202 of a keyed request to the path suffix named by
// MA_CRASH_BEFORE_ANSWER (e.g. "/observe"). Everything the handler stored is committed by then; the
// answer never leaves. Test-only: the service has no such hook.
import http from 'node:http';

const suffix = process.env.MA_CRASH_BEFORE_ANSWER;
if (suffix) {
  const writeHead = http.ServerResponse.prototype.writeHead;
  http.ServerResponse.prototype.writeHead = function (status, ...rest) {
    const path = (this.req?.url ?? '').split('?')[0];
    if (status === 202 && path.endsWith(suffix) && this.req?.headers['idempotency-key']) process.kill(process.pid, 'SIGKILL');
    return writeHead.call(this, status, ...rest);
  };
}
