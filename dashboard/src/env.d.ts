// Style sheets imported for their side effect: Vite bundles them into the build's CSS file.
declare module '*.css';
