/** Entry point: mounts the dashboard into index.html's #app. */
import { render } from 'preact';
import { App } from './app';
import './styles.css';

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
