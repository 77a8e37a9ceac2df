// Builds the fixture with webpack's Node API (no webpack-cli), production mode.
const path = require('path')
const webpack = require('webpack')
const HtmlWebpackPlugin = require('html-webpack-plugin')
const MiniCssExtractPlugin = require('mini-css-extract-plugin')
const CopyPlugin = require('copy-webpack-plugin')
const { WebpackManifestPlugin } = require('webpack-manifest-plugin')
const { WebpackAssetsManifest } = require('webpack-assets-manifest')

const config = {
  mode: 'production',
  context: __dirname,
  entry: { main: './src/index.js' },
  devtool: 'source-map',
  output: {
    path: path.resolve(__dirname, 'dist'),
    publicPath: '/static/',
    filename: 'js/[name].[contenthash:8].js',
    chunkFilename: 'js/[name].[contenthash:8].chunk.js',
    assetModuleFilename: 'media/[name].[contenthash:8][ext]',
    clean: true,
  },
  module: {
    rules: [
      { test: /\.css$/, use: [MiniCssExtractPlugin.loader, 'css-loader'] },
      { test: /\.(woff2|png)$/, type: 'asset/resource' },
    ],
  },
  plugins: [
    new HtmlWebpackPlugin({ template: './src/index.html', filename: 'index.html' }),
    new MiniCssExtractPlugin({
      filename: 'css/[name].[contenthash:8].css',
      chunkFilename: 'css/[name].[contenthash:8].chunk.css',
    }),
    new CopyPlugin({ patterns: [{ from: 'public', to: '.' }] }),
    // create-react-app's shape: files (name -> public URL) and entrypoints.
    new WebpackManifestPlugin({
      fileName: 'asset-manifest.json',
      generate: (seed, files, entrypoints) => ({
        files: files.reduce((m, f) => { m[f.name] = f.path; return m }, seed),
        entrypoints: entrypoints.main.filter((f) => !f.endsWith('.map')),
      }),
    }),
    new WebpackAssetsManifest({ output: 'assets-manifest.json', entrypoints: true, integrity: true }),
  ],
}

webpack(config, (err, stats) => {
  if (err) { console.error(err); process.exit(1) }
  console.log(stats.toString({ colors: false, modules: false }))
  if (stats.hasErrors()) process.exit(1)
})
