import { detectPropertyType, normalisePropertyValue } from '@mailrail/domain/audience/properties/contact-properties';

const column = (value: string, n: number, ...others: string[]) => [...Array<string>(n).fill(value), ...others];

it.each([
  [['250', '99.5', '-1', '1e3', ' 7 ', '.5'], 'number'],
  [column('42', 9, 'n/a'), 'number'], // nine in ten: a stray "n/a" keeps a column of amounts a number
  [column('42', 8, 'n/a', 'none'), 'string'],
  [['yes', 'No', 'TRUE', 'off', 'y'], 'boolean'],
  [['1', '0', '1'], 'number'], // 1/0 read as numbers first
  [['2025-03-01', '2025-03-02T10:00:00Z', '2025-12-31 23:59'], 'date'],
  [['2025-13-01', '2025-00-10'], 'string'], // no such month
  [['03/01/2025'], 'string'],
  [['Acme', '42'], 'string'],
  [['', '  '], 'string'],
  [[], 'string'],
])('%j reads as %s', (values, type) => {
  expect(detectPropertyType(values)).toBe(type);
});

it('stores yes/no values of a boolean property as "true"/"false" and keeps every other value as written', () => {
  expect(['Yes', 'on', '1', 'TRUE', 'y'].map((v) => normalisePropertyValue('boolean', v))).toEqual([
    'true',
    'true',
    'true',
    'true',
    'true',
  ]);
  expect(['no', 'OFF', '0', 'false', 'n'].map((v) => normalisePropertyValue('boolean', v))).toEqual([
    'false',
    'false',
    'false',
    'false',
    'false',
  ]);
  expect(normalisePropertyValue('boolean', 'maybe')).toBe('maybe');
  expect(normalisePropertyValue('number', 'yes')).toBe('yes');
  expect(normalisePropertyValue('date', '03/01/2025')).toBe('03/01/2025');
});
