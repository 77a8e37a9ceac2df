import{j as e}from"./index-B4TPZJfM.js";function t(){return e.jsx("p",{className:"report",children:"every asset on the CDN"})}export{t as default};
