import { encodeCommand } from 'src/common/redis/encoded-script';

describe(encodeCommand.name, () => {
  const head = Buffer.from('$7\r\nEVALSHA\r\n$3\r\nabc\r\n');

  it('should write the count, the head and each argument as a bulk string of its UTF-8 bytes', () => {
    const bytes = encodeCommand(head, 2, [1, 'gw:{a}', 'naïve 🎉', '', 42]);

    expect(bytes.toString('utf8')).toBe(
      '*7\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n' + '$1\r\n1\r\n$6\r\ngw:{a}\r\n$11\r\nnaïve 🎉\r\n$0\r\n\r\n$2\r\n42\r\n',
    );
  });

  it('should fill exactly the buffer it sized, for text that looks like RESP itself', () => {
    const payload = `{"note":"\r\n$3\r\n*2","long":"${'é'.repeat(5_000)}"}`;

    const bytes = encodeCommand(head, 2, [payload]);

    const prefix = `*3\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$${Buffer.byteLength(payload)}\r\n`;
    expect(bytes.length).toBe(Buffer.byteLength(prefix) + Buffer.byteLength(payload) + 2);
    expect(bytes.toString('utf8')).toBe(`${prefix}${payload}\r\n`);
  });

  it('should count past nine arguments, and write numbers as their decimal digits', () => {
    const args = [10, 0, 9, 99, 100, 12345, 'a', 'b', 'c', 'd', 'e', 'f'];

    const bytes = encodeCommand(head, 2, args);

    const bulks = args.map((arg) => `$${String(arg).length}\r\n${arg}\r\n`).join('');
    expect(bytes.toString('utf8')).toBe(`*14\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n${bulks}`);
  });
});
