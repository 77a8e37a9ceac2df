import{a as t,f as o}from"./CBXzIVa8.js";import"./HMcR5Wnb.js";var f=o('<div class="chart svelte-1knyfmf">chart</div>');function s(a){var r=f();t(a,r)}export{s as default};
