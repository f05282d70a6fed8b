// The form a person fills in for an elicitation: one field at a time, each typed text read
// into the value the server's schema asks for. Shared by the VS Code form and answer checks.
import type { ElicitationField, ElicitationSchema } from './tools.js';

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
  if (field.type === 'boolean') {
    if (/^(true|yes|y)$/i.test(text)) return { ok: true, value: true };
    if (/^(false|no|n)$/i.test(text)) return { ok: true, value: false };
    return { ok: false, error: 'answer yes or no' };
  }
  if (field.type === 'number' || field.type === 'integer') {
    const value = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(value)) return { ok: false, error: 'enter a number' };
    if (field.type === 'integer' && !Number.isInteger(value)) return { ok: false, error: 'enter a whole number' };
    if (field.minimum !== undefined && value < field.minimum) return { ok: false, error: `at least ${field.minimum}` };
    if (field.maximum !== undefined && value > field.maximum) return { ok: false, error: `at most ${field.maximum}` };
    return { ok: true, value };
  }
  if (field.enum && !field.enum.includes(text)) return { ok: false, error: `one of ${field.enum.join(', ')}` };
  if (field.minLength !== undefined && text.length < field.minLength) return { ok: false, error: `at least ${field.minLength} characters` };
  if (field.maxLength !== undefined && text.length > field.maxLength) return { ok: false, error: `at most ${field.maxLength} characters` };
  if (field.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(text)) return { ok: false, error: 'enter an email address' };
  return { ok: true, value: text };
}

/** A field's default as the text a person would type, if the schema gives one of the field's type. */
export function defaultText(form: FormField): string | undefined {
  const d = form.field.default;
  return typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean' ? String(d) : undefined;
}
