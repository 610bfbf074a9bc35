import { escapeHtml, renderTemplate } from './template';

describe('renderTemplate', () => {
  it('replaces a variable, with or without whitespace inside the braces', () => {
    expect(renderTemplate('Hi {{name}} and {{ name }}!', { name: 'Ada' })).toBe('Hi Ada and Ada!');
  });

  it('uses the fallback when the variable is missing or empty', () => {
    expect(renderTemplate('Hi {{name,fallback=there}}', {})).toBe('Hi there');
    expect(renderTemplate('Hi {{ name , fallback = friend }}', { name: '' })).toBe('Hi friend');
    expect(renderTemplate('Hi {{name,fallback=there}}', { name: 'Bo' })).toBe('Hi Bo');
  });

  it('renders a missing variable without fallback as empty, or keeps it when asked', () => {
    expect(renderTemplate('[{{missing}}]', {})).toBe('[]');
    expect(renderTemplate('[{{missing}}]', {}, { onMissing: 'keep' })).toBe('[{{missing}}]');
  });

  it('HTML-escapes values and fallbacks only when asked', () => {
    const vars = { name: '<b>"Tom" & \'Jerry\'</b>' };
    expect(renderTemplate('<p>{{name}}</p>', vars, { escapeHtml: true })).toBe('<p>&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;</p>');
    expect(renderTemplate('{{name}}', vars)).toBe(vars.name);
    expect(renderTemplate('{{x,fallback=a<b}}', {}, { escapeHtml: true })).toBe('a&lt;b');
  });

  it('turns numbers and booleans into text and matches names case-insensitively', () => {
    expect(renderTemplate('{{count}} {{ok}} {{FirstName}}', { count: 3, ok: true, firstname: 'Ann' })).toBe('3 true Ann');
  });

  it('accepts the contact. prefix and leaves text without placeholders alone', () => {
    expect(renderTemplate('{{ contact.firstName }}', { firstName: 'Cy' })).toBe('Cy');
    expect(renderTemplate('no braces { here }', { a: 'b' })).toBe('no braces { here }');
  });

  it('does not re-render placeholders that come from values', () => {
    expect(renderTemplate('{{a}}', { a: '{{b}}', b: 'x' })).toBe('{{b}}');
  });

  it('escapes the five HTML metacharacters', () => {
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
  });
});
