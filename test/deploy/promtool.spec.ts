import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const prometheus = join(__dirname, '..', '..', 'deploy', 'prometheus');

/** Whether Prometheus's promtool is on the PATH (Debian's `prometheus` package; .ci/run installs it). */
function hasPromtool(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// Skipped only on a machine without promtool; CI sets GATEWAY_REQUIRE_PROMTOOL, so there it fails instead.
const available = hasPromtool() || process.env.GATEWAY_REQUIRE_PROMTOOL === '1';

(available ? describe : describe.skip)('promtool on deploy/prometheus', () => {
  const promtool = (...args: string[]) => promisify(execFile)('promtool', args, { cwd: prometheus });

  it('should accept the alert rules', async () => {
    const { stdout } = await promtool('check', 'rules', 'alerts.yml');
    expect(stdout).toContain('SUCCESS');
  });

  it("should pass every alert's firing and quiet cases", async () => {
    const { stdout } = await promtool('test', 'rules', 'alerts.test.yml');
    expect(stdout).toContain('SUCCESS');
  });
});
