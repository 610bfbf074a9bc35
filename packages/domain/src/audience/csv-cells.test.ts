import { csvField, fromSpreadsheetSafe, safeCsvCell, spreadsheetSafe } from './csv-cells';

describe('spreadsheet-safe CSV cells', () => {
  it('puts a quote before a cell a spreadsheet would run as a formula, and only then', () => {
    for (const formula of ['=SUM(A1)', '+1', '-5', '@cmd', '\t=x', '\r=x', "'=x", "''-1"])
      expect(spreadsheetSafe(formula)).toBe(`'${formula}`);
    for (const text of ['Ada', "O'Brien", "'quoted'", 'a=b', ' =x', '', '1-2']) expect(spreadsheetSafe(text)).toBe(text);
  });

  it('reads back exactly what was written: fromSpreadsheetSafe undoes spreadsheetSafe, and leaves other text alone', () => {
    const values = ['=SUM(A1)', '+1', '-5', '@cmd', '\t=x', "'=x", "''-1", "'", "''", "'Ada", "O'Brien", 'plain', '', '=', "'-"];
    for (const v of values) expect(fromSpreadsheetSafe(spreadsheetSafe(v))).toBe(v);
    // A leading quote before anything else is plain text (a name like 'Ollie, a file from elsewhere).
    expect(fromSpreadsheetSafe("'Ollie")).toBe("'Ollie");
  });

  it('quotes after escaping (RFC 4180), and writes null as an empty field', () => {
    expect(safeCsvCell('=HYPERLINK("http://x.test","y")')).toBe(`"'=HYPERLINK(""http://x.test"",""y"")"`);
    expect(safeCsvCell('a,b')).toBe(csvField('a,b'));
    expect(safeCsvCell(-5)).toBe('-5'); // numbers mailrail writes (line numbers) are data, not text
    expect(safeCsvCell(null)).toBe('');
  });
});
