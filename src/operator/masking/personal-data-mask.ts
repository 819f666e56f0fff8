/**
 * Masking of the personal data in a payload the operator's reads show (a dead letter's ERP
 * event in the console): names, addresses, e-mail addresses, phone numbers, VINs, number
 * plates and document contents, wherever they are.
 *
 * - By key, at any depth: a field whose name says what it holds (`firstName`, `email`,
 *   `billingAddress`, `vin`, `numberPlate`, `contentBase64`, …) is masked whatever its
 *   value; an object under an address key has every string in it masked (but its country).
 * - By pattern, in every other string (free text such as `invoiceComments`, `note`,
 *   `reason`, a line's description): e-mail addresses, phone numbers written with their
 *   country code or after "tel"/"phone"/"mobile", and VINs.
 *
 * What is masked keeps a hint that lets a person match it with what the customer says
 * (the first letter and the domain of an e-mail, the last two digits of a phone, the
 * manufacturer code of a VIN), never enough to contact or identify anyone. Ids, amounts,
 * dates, states and types stay readable.
 */
import { maskEmail, maskPhone } from '../order-timeline/customer-contact.query.js';

/** What kind of personal data was found (for the page's hint and the audit's details). */
export const PERSONAL_DATA_KINDS = [
  'name',
  'address',
  'email',
  'phone',
  'vin',
  'number_plate',
  'document',
] as const;
export type PersonalDataKind = (typeof PERSONAL_DATA_KINDS)[number];

export interface MaskedPayload {
  readonly masked: unknown;
  /** The kinds found, in PERSONAL_DATA_KINDS order; empty when the payload holds none. */
  readonly found: readonly PersonalDataKind[];
}

const MASK = '•••';

/** Keys by what they hold; the first that matches decides. Names are compared without `_`/`-`. */
const KEY_KINDS: readonly (readonly [RegExp, PersonalDataKind])[] = [
  [/^(email|e?mailaddress|.*email)$/, 'email'],
  [/(phone|mobile|^tel$|^telephone|fax|msisdn)/, 'phone'],
  [/^(vin|vehicleidentificationnumber|chassisnumber)$/, 'vin'],
  [
    /^((number|licen[cs]e|registration)?plate(number|no)?|registrationnumber|regno)$/,
    'number_plate',
  ],
  [/(address|^street|^postalcode$|^postcode$|^zip(code)?$|^city$|^careof$)/, 'address'],
  [
    /^(first|last|middle|given|family|full|sur|customer|contact|company|display|person|advisor|serviceadvisor|payer|holder|cardholder)?name$/,
    'name',
  ],
  [/^(contentbase64|filecontent|documentcontent)$/, 'document'],
];

/** Inside an address object these stay readable. */
const ADDRESS_KEPT = new Set(['country', 'countrycode']);

const EMAIL_TEXT = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const PHONE_TEXT = /\+\d[\d\s().-]{6,}\d/g;
const LABELLED_PHONE_TEXT =
  /\b(tel|tlf|phone|telephone|mobile|mob|mobil)(\.?:?\s*)(\d[\d\s().-]{5,}\d)/gi;
/** 17 characters of a VIN (no I, O, Q), with letters and digits both. */
const VIN_TEXT = /\b(?=[A-HJ-NPR-Z0-9]*\d)(?=[A-HJ-NPR-Z0-9]*[A-HJ-NPR-Z])[A-HJ-NPR-Z0-9]{17}\b/g;

function normalizedKey(key: string): string {
  return key.replace(/[_\-\s]/g, '').toLowerCase();
}

function kindOfKey(key: string): PersonalDataKind | undefined {
  const name = normalizedKey(key);
  if (name === '') return undefined;
  return KEY_KINDS.find(([pattern]) => pattern.test(name))?.[1];
}

/** "WVW••••••••••••••": the manufacturer code (not personal), the rest masked. */
export function maskVin(vin: string): string {
  const text = vin.trim();
  return text.length > 3 ? `${text.slice(0, 3)}${'•'.repeat(text.length - 3)}` : MASK;
}

/** "••••12": the last two characters. */
export function maskPlate(plate: string): string {
  const text = plate.replace(/\s/g, '');
  return text.length > 2 ? `••••${text.slice(-2)}` : MASK;
}

/** A name: the first letter ("K•••"). */
export function maskName(name: string): string {
  const text = name.trim();
  return text === '' ? '' : `${text.slice(0, 1)}${MASK}`;
}

function maskString(kind: PersonalDataKind, value: string): string {
  if (value === '') return value;
  switch (kind) {
    case 'email':
      return maskEmail(value);
    case 'phone':
      return maskPhone(value);
    case 'vin':
      return maskVin(value);
    case 'number_plate':
      return maskPlate(value);
    case 'name':
      return maskName(value);
    case 'address':
      return MASK;
    case 'document':
      return `[document: ${value.length} characters]`;
  }
}

/**
 * Free text with the e-mail addresses, phone numbers and VINs in it masked; `found`
 * receives what it held.
 */
export function maskFreeText(text: string, found?: Set<PersonalDataKind>): string {
  let result = text.replace(EMAIL_TEXT, (email) => {
    found?.add('email');
    return maskEmail(email);
  });
  result = result.replace(PHONE_TEXT, (phone) => {
    found?.add('phone');
    return maskPhone(phone);
  });
  result = result.replace(
    LABELLED_PHONE_TEXT,
    (_all, label: string, gap: string, number: string) => {
      found?.add('phone');
      return `${label}${gap}${maskPhone(number)}`;
    },
  );
  return result.replace(VIN_TEXT, (vin) => {
    found?.add('vin');
    return maskVin(vin);
  });
}

function maskValue(
  value: unknown,
  kind: PersonalDataKind | undefined,
  found: Set<PersonalDataKind>,
): unknown {
  if (typeof value === 'string') {
    if (kind === undefined) return maskFreeText(value, found);
    if (value !== '') found.add(kind);
    return maskString(kind, value);
  }
  if (typeof value === 'number' && kind !== undefined && kind !== 'document') {
    // A phone number or a house number written as a number.
    found.add(kind);
    return MASK;
  }
  if (Array.isArray(value)) return value.map((entry) => maskValue(entry, kind, found));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, entry]) => {
        if (kind === 'address' && ADDRESS_KEPT.has(normalizedKey(name))) return [name, entry];
        if (kind === 'phone') {
          // { countryCode, number }: the number masked, the country code kept.
          return [
            name,
            normalizedKey(name) === 'countrycode' ? entry : maskValue(entry, kind, found),
          ];
        }
        // Inside a field of a known kind, everything is of that kind (an address's street).
        return [name, maskValue(entry, kind ?? kindOfKey(name), found)];
      }),
    );
  }
  return value;
}

/** The payload (parsed JSON) with its personal data masked, and what kinds it held. */
export function maskPersonalData(payload: unknown): MaskedPayload {
  const found = new Set<PersonalDataKind>();
  const masked = maskValue(payload, undefined, found);
  return { masked, found: PERSONAL_DATA_KINDS.filter((kind) => found.has(kind)) };
}

/** Text that is not JSON, masked by pattern; what kinds it held. */
export function maskPersonalText(text: string): { masked: string; found: PersonalDataKind[] } {
  const found = new Set<PersonalDataKind>();
  const masked = maskFreeText(text, found);
  return { masked, found: PERSONAL_DATA_KINDS.filter((kind) => found.has(kind)) };
}

/** "names, e-mail addresses and phone numbers": the kinds as words, for pages and the audit. */
export function describeKinds(kinds: readonly PersonalDataKind[]): string {
  const words: Record<PersonalDataKind, string> = {
    name: 'names',
    address: 'addresses',
    email: 'e-mail addresses',
    phone: 'phone numbers',
    vin: 'VINs',
    number_plate: 'number plates',
    document: 'document contents',
  };
  const list = kinds.map((kind) => words[kind]);
  if (list.length <= 1) return list.join('');
  return `${list.slice(0, -1).join(', ')} and ${list.at(-1) ?? ''}`;
}
