import { setImmediate as nextTurn } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { TurnCork } from 'src/common/http/turn-cork';

/** A Writable that keeps what each of its writes to the "socket" carried, as one string per write. */
function recordingWritable(): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      writes.push(chunk);
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
      done();
    },
  });
  return { stream, writes };
}

describe(TurnCork.name, () => {
  it('should send the writes of one turn in one write, at the end of the turn', async () => {
    const { stream, writes } = recordingWritable();
    const client = new TurnCork(stream);
    client.write('a');
    client.write('b');
    expect(writes).toEqual([]);
    await nextTurn();
    client.write('c');
    await nextTurn();
    expect(writes).toEqual(['ab', 'c']);
  });

  it('should send the writes held while the work runs together with the end', async () => {
    const { stream, writes } = recordingWritable();
    const client = new TurnCork(stream);
    client.write('event ');
    const extra = await client.holdWhile(async () => {
      await nextTurn();
      await nextTurn();
      return 'extra ';
    });
    expect(writes).toEqual([]);
    client.end(`${extra}[DONE]`);
    await nextTurn();
    expect(writes).toEqual(['event extra [DONE]']);
  });

  it('should send the held writes at once when the work fails', async () => {
    const { stream, writes } = recordingWritable();
    const client = new TurnCork(stream);
    client.write('event');
    await expect(client.holdWhile(() => Promise.reject(new Error('record failed')))).rejects.toThrow('record failed');
    await nextTurn();
    expect(writes).toEqual(['event']);
    client.end('error');
    await nextTurn();
    expect(writes).toEqual(['event', 'error']);
  });

  it('should not hold back writes of earlier turns when the end comes later', async () => {
    const { stream, writes } = recordingWritable();
    const client = new TurnCork(stream);
    client.write('first');
    await nextTurn();
    expect(writes).toEqual(['first']);
    await client.holdWhile(() => Promise.resolve());
    client.end('last');
    await nextTurn();
    expect(writes).toEqual(['first', 'last']);
  });
});
