// Does an mcphub daemon answer at this address? `GET /healthz` (no token needed) within a bound.
import { get } from "node:http";

/** Undefined when `GET <base>healthz` answers 200 within `timeoutMs`, else why not (ECONNREFUSED, ...). */
export function healthProblem(base: string, timeoutMs = 2000): Promise<string | undefined> {
  return new Promise((resolve) => {
    let req;
    try {
      req = get(`${base.replace(/\/?$/, "/")}healthz`, { timeout: timeoutMs }, (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? undefined : `GET /healthz answered ${res.statusCode}`);
      });
    } catch (err) {
      resolve((err as Error).message);
      return;
    }
    req.once("timeout", () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000}s`), { code: `no answer within ${timeoutMs / 1000}s` })));
    req.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}
