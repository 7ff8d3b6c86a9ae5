import { EventEmitter, once } from 'node:events';
import { CancelSignal, followedSignal, RequestSignal } from 'src/common/http/cancel-signal';

describe('RequestSignal', () => {
  it('tells its listeners once, with the first reason', () => {
    const signal = new RequestSignal();
    const heard: unknown[] = [];
    const clientLeft = new Error('client left');
    signal.addEventListener('abort', () => heard.push(signal.reason));
    signal.abort(clientLeft);
    signal.abort(new Error('deadline'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(clientLeft);
    expect(heard).toEqual([clientLeft]);
  });

  it('forgets a removed listener, counts a listener added twice once, and never calls one added after the abort', () => {
    const signal = new RequestSignal();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    const twice = () => calls.push('twice');
    signal.addEventListener('abort', removed);
    signal.addEventListener('abort', twice);
    signal.addEventListener('abort', twice);
    signal.removeEventListener('abort', removed);
    signal.abort(new Error('cut'));
    signal.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['twice']);
  });

  it('runs every listener when one throws, then throws the first error to whoever aborted', () => {
    const signal = new RequestSignal();
    const calls: string[] = [];
    signal.addEventListener('abort', () => {
      throw new Error('first');
    });
    signal.addEventListener('abort', () => {
      calls.push('second');
      throw new Error('second');
    });
    signal.addEventListener('abort', () => calls.push('third'));
    expect(() => signal.abort(new Error('cut'))).toThrow('first');
    expect(calls).toEqual(['second', 'third']);
  });

  it('is accepted where an AbortSignal-like object is expected, as a real AbortSignal is', () => {
    const real: CancelSignal = new AbortController().signal;
    const light: CancelSignal = new RequestSignal();
    expect([real.aborted, light.aborted]).toEqual([false, false]);
  });
});

describe('followedSignal', () => {
  it("aborts a real AbortSignal with the request's reason, for Node APIs that need one", async () => {
    const request = new RequestSignal();
    const { signal } = followedSignal(request);
    const waiting = once(new EventEmitter(), 'never', { signal });
    const reason = new Error('client left');
    request.abort(reason);
    expect(signal.reason).toBe(reason);
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('starts aborted when the request already is, and stops following once unfollowed', () => {
    const gone = new RequestSignal();
    const reason = new Error('gone');
    gone.abort(reason);
    expect(followedSignal(gone).signal.reason).toBe(reason);

    const request = new RequestSignal();
    const followed = followedSignal(request);
    followed.unfollow();
    request.abort(new Error('later'));
    expect(followed.signal.aborted).toBe(false);
  });
});
