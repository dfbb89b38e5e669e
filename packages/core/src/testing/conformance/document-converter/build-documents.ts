/**
 * Small documents built in memory, for converter tests: hand-written PDFs (text pages, optionally a
 * JPEG drawn on a page), stored (uncompressed) ZIP archives and minimal DOCX packages. Pure
 * TypeScript: no native module, no files on disk.
 */

const encoder = new TextEncoder();

function concat(parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** One page of {@link buildPdf}. */
export type PdfPageSpec = {
  /** Text lines drawn with Helvetica from the top of the page. */
  text?: string[];
  /**
   * An image drawn at `box` = [x, y, width, height] (points, origin bottom-left): JPEG bytes
   * (`jpeg`), or raw 8-bit grey samples, one byte per pixel, row by row (`gray`, needs no encoder).
   */
  image?: { jpeg?: Uint8Array; gray?: Uint8Array; pixelWidth: number; pixelHeight: number; box: [number, number, number, number] };
};

/** Builds a PDF (612x792 pt pages) with a correct xref table. */
export function buildPdf(pages: PdfPageSpec[]): Uint8Array {
  const objects: Uint8Array[][] = [];
  const add = (parts: Array<string | Uint8Array>): number => {
    objects.push(parts.map((part) => (typeof part === 'string' ? encoder.encode(part) : part)));
    return objects.length;
  };
  const catalog = add([]);
  const pagesId = add([]);
  const font = add(['<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>']);
  const kids: number[] = [];
  for (const page of pages) {
    let content = '';
    let resources = `/Font << /F1 ${font} 0 R >>`;
    if (page.image !== undefined) {
      const { jpeg, gray, pixelWidth, pixelHeight, box } = page.image;
      const samples = jpeg ?? gray ?? new Uint8Array(pixelWidth * pixelHeight).fill(255);
      const encoding = jpeg === undefined ? '/ColorSpace /DeviceGray' : '/ColorSpace /DeviceRGB /Filter /DCTDecode';
      const image = add([
        `<< /Type /XObject /Subtype /Image /Width ${pixelWidth} /Height ${pixelHeight} ${encoding} /BitsPerComponent 8 /Length ${samples.length} >>\nstream\n`,
        samples,
        '\nendstream',
      ]);
      resources += ` /XObject << /Im0 ${image} 0 R >>`;
      content += `q ${box[2]} 0 0 ${box[3]} ${box[0]} ${box[1]} cm /Im0 Do Q\n`;
    }
    (page.text ?? []).forEach((line, index) => {
      const escaped = line.replace(/[\\()]/g, (char) => `\\${char}`);
      content += `BT /F1 11 Tf 72 ${740 - index * 16} Td (${escaped}) Tj ET\n`;
    });
    const stream = add([`<< /Length ${encoder.encode(content).length} >>\nstream\n${content}endstream`]);
    kids.push(add([`<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Resources << ${resources} >> /Contents ${stream} 0 R >>`]));
  }
  objects[catalog - 1] = [encoder.encode(`<< /Type /Catalog /Pages ${pagesId} 0 R >>`)];
  objects[pagesId - 1] = [encoder.encode(`<< /Type /Pages /Kids [${kids.map((kid) => `${kid} 0 R`).join(' ')}] /Count ${kids.length} >>`)];
  const parts: Uint8Array[] = [encoder.encode('%PDF-1.4\n%\u00e2\u00e3\n')];
  const offsets: number[] = [];
  let length = parts[0]?.length ?? 0;
  objects.forEach((body, index) => {
    offsets.push(length);
    const chunk = concat([encoder.encode(`${index + 1} 0 obj\n`), ...body, encoder.encode('\nendobj\n')]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(encoder.encode(`${xref}trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return concat(parts);
}

/** A PDF whose page tree points at itself: pdf.js fails with an error it does not classify. */
export function circularPagesPdf(): Uint8Array {
  const body = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [2 0 R] /Count 1 >>'];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  body.forEach((object, index) => {
    offsets.push(out.length);
    out += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 3\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return encoder.encode(out);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, index) => {
  let crc = index;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  return crc >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A ZIP archive with the given entries, stored without compression. */
export function buildZip(entries: Record<string, string | Uint8Array>): Uint8Array {
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(entries)) {
    const data = typeof content === 'string' ? encoder.encode(content) : content;
    const nameBytes = encoder.encode(name);
    const crc = crc32(data);
    const local = new Uint8Array(30 + nameBytes.length);
    const localView = new DataView(local.buffer);
    localView.setUint32(0, 0x04034b50, true);
    localView.setUint16(4, 20, true);
    localView.setUint32(14, crc, true);
    localView.setUint32(18, data.length, true);
    localView.setUint32(22, data.length, true);
    localView.setUint16(26, nameBytes.length, true);
    local.set(nameBytes, 30);
    const central = new Uint8Array(46 + nameBytes.length);
    const centralView = new DataView(central.buffer);
    centralView.setUint32(0, 0x02014b50, true);
    centralView.setUint16(4, 20, true);
    centralView.setUint16(6, 20, true);
    centralView.setUint32(16, crc, true);
    centralView.setUint32(20, data.length, true);
    centralView.setUint32(24, data.length, true);
    centralView.setUint16(28, nameBytes.length, true);
    centralView.setUint32(42, offset, true);
    central.set(nameBytes, 46);
    locals.push(local, data);
    centrals.push(central);
    offset += local.length + data.length;
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0);
  const end = new Uint8Array(22);
  const endView = new DataView(end.buffer);
  endView.setUint32(0, 0x06054b50, true);
  endView.setUint16(8, centrals.length, true);
  endView.setUint16(10, centrals.length, true);
  endView.setUint32(12, centralSize, true);
  endView.setUint32(16, offset, true);
  return concat([...locals, ...centrals, end]);
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const DRAWING_NAMESPACES = [
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"',
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"',
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"',
  'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"',
].join(' ');

/** A paragraph holding an inline picture (relationship `id`) with alt text `alt`. */
export function docxImage(id: string, alt: string): string {
  return `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="1905000" cy="952500"/><wp:docPr id="1" name="Picture" descr="${alt}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="0" name="p.png" descr="${alt}"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="${id}"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
}

/**
 * A minimal DOCX: `body` is the inner XML of `<w:body>`; optional footnotes XML (inner of
 * `<w:footnotes>`); `media` maps relationship ids to PNG files placed in `word/media/`
 * (reference them with {@link docxImage}).
 */
export function buildDocx(body: string, footnotes?: string, media: Record<string, Uint8Array> = {}): Uint8Array {
  const entries: Record<string, string | Uint8Array> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8"?><w:document ${W} ${DRAWING_NAMESPACES}><w:body>${body}</w:body></w:document>`,
    'word/styles.xml': `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style><w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>`,
  };
  let relationships = '<Relationship Id="rIdStyles" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>';
  if (footnotes !== undefined) {
    entries['word/footnotes.xml'] = `<?xml version="1.0" encoding="UTF-8"?><w:footnotes ${W}>${footnotes}</w:footnotes>`;
    relationships += '<Relationship Id="rIdFootnotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>';
  }
  for (const [id, png] of Object.entries(media)) {
    entries[`word/media/${id}.png`] = png;
    relationships += `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/${id}.png"/>`;
  }
  entries['word/_rels/document.xml.rels'] = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relationships}</Relationships>`;
  return buildZip(entries);
}

/** `<w:p>` with an optional style id. */
export function docxParagraph(text: string, style?: string): string {
  const properties = style === undefined ? '' : `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>`;
  return `<w:p>${properties}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
}
