import { isOwnMailbox, normalizedMailbox } from 'src/modules/referrals/normalized-mailbox';

describe(normalizedMailbox.name, () => {
  it('should ignore case and a +tag at any domain', () => {
    expect(normalizedMailbox(' Ada+Invite@Example.COM ')).toBe('ada@example.com');
    expect(normalizedMailbox('ada+a+b@example.com')).toBe('ada@example.com');
  });

  it('should drop the dots of a Gmail address and read googlemail.com as gmail.com', () => {
    expect(normalizedMailbox('A.da.Love+1@GoogleMail.com')).toBe('adalove@gmail.com');
    expect(normalizedMailbox('a.da@gmail.com')).toBe('ada@gmail.com');
  });

  it('should keep the dots of an address elsewhere, where they may name another mailbox', () => {
    expect(normalizedMailbox('a.da@example.com')).toBe('a.da@example.com');
  });

  it('should leave an address without a local part as it is, lower-cased', () => {
    expect(normalizedMailbox('@Example.com')).toBe('@example.com');
  });
});

describe(isOwnMailbox.name, () => {
  it('should find me+1@gmail.com and m.e@googlemail.com to be me@gmail.com', () => {
    expect(isOwnMailbox('me+1@gmail.com', 'me@gmail.com')).toBe(true);
    expect(isOwnMailbox('m.e@googlemail.com', 'ME@gmail.com')).toBe(true);
  });

  it('should tell apart different mailboxes', () => {
    expect(isOwnMailbox('me2@gmail.com', 'me@gmail.com')).toBe(false);
    expect(isOwnMailbox('m.e@example.com', 'me@example.com')).toBe(false);
    expect(isOwnMailbox('me@example.org', 'me@example.com')).toBe(false);
  });
});
