/** Set up before every test file: the temp folders its tests made outside a test go after its tests. */
import { afterAll } from 'vitest';
import { removeFileDirs } from '../helpers/temp.js';

afterAll(removeFileDirs);
