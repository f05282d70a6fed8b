// The form a person fills in for an elicitation: one field at a time, each typed text read
// into the value the server's schema asks for. Shared by the VS Code form and answer checks.
import type { ElicitationField, ElicitationSchema } from '../tools/tools.js';

export interface FormField {
  name: string;
  field: ElicitationField;
  required: boolean;
  /** What the person sees: the field's title, else its name. */
  label: string;
}

/** The fields in the schema's order, required ones marked. */
export function formFields(schema: ElicitationSchema): FormField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, field]) => ({
    name, field, required: required.has(name), label: typeof field.title === 'string' && field.title ? field.title : name,
  }));
}

export type FieldValue = { ok: true; value: string | number | boolean | undefined } | { ok: false; error: string };

/** Reads typed text as the field's value; empty text is "no value" (an error when required). */
export function readField(form: FormField, text: string): FieldValue {
  const { field } = form;
  if (text === '') return form.required ? { ok: false, error: `${form.label} is required` } : { ok: true, value: undefined };
  let value: string | number | boolean = text;
  if (field.type === 'boolean') {
    if (/^(true|yes|y)$/i.test(text)) value = true;
    else if (/^(false|no|n)$/i.test(text)) value = false;
    else return { ok: false, error: 'answer yes or no' };
  } else if (field.type === 'number' || field.type === 'integer') {
    value = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(value)) return { ok: false, error: 'enter a number' };
  }
  const problem = checkFieldValue(field, value);
  return problem === undefined ? { ok: true, value } : { ok: false, error: problem };
}

/**
 * What is wrong with a value for this field (its type, enum, length, bounds, email format), or
 * undefined when it fits. The form checks what a person typed with it, the runtime every answer.
 */
export function checkFieldValue(field: ElicitationField, value: unknown): string | undefined {
  const type = field.type;
  const fits = type === 'string' ? typeof value === 'string'
    : type === 'boolean' ? typeof value === 'boolean'
    : type === 'integer' ? Number.isInteger(value)
    : typeof value === 'number' && Number.isFinite(value);
  if (!fits) return type === 'integer' && typeof value === 'number' && Number.isFinite(value) ? 'enter a whole number' : `must be ${type === 'integer' ? 'an' : 'a'} ${type}`;
  if (field.enum && !field.enum.includes(value as string)) return `one of ${field.enum.join(', ')}`;
  if (typeof value === 'string') {
    if (field.minLength !== undefined && value.length < field.minLength) return `at least ${field.minLength} characters`;
    if (field.maxLength !== undefined && value.length > field.maxLength) return `at most ${field.maxLength} characters`;
    if (field.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(value)) return 'enter an email address';
  } else if (typeof value === 'number') {
    if (field.minimum !== undefined && value < field.minimum) return `at least ${field.minimum}`;
    if (field.maximum !== undefined && value > field.maximum) return `at most ${field.maximum}`;
  }
  return undefined;
}

/** A field's default as the text a person would type, if the schema gives one of the field's type. */
export function defaultText(form: FormField): string | undefined {
  const d = form.field.default;
  return typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean' ? String(d) : undefined;
}
