/** Reading and driving the /debug/timeline page in a browser: its elements' text, its tables' rows, its filters. */
import type { Page } from 'puppeteer-core';

/** The text of each element the selector finds, its white space folded. */
export const texts = (page: Page, selector: string): Promise<string[]> => page.$$eval(selector, (es) => es.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()));

/** Each object row of a table (#changes, #state), its cells joined by a space. */
export const rows = (page: Page, table: string): Promise<string[]> =>
  page.$$eval(`${table} tr[data-key]`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent).join(' ')));

/** Sets a filter (an input or a select, by id) as a person does: the value, then its change event. */
export async function setFilter(page: Page, id: string, value: string): Promise<void> {
  await page.$eval(
    `#${id}`,
    (e, v) => {
      (e as HTMLInputElement).value = v;
      e.dispatchEvent(new Event('change'));
    },
    value,
  );
}
